import { keys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis.js';

/** What an ingress process estimates of one sender's clock, as operators see it. */
export interface SenderClock {
  /** `metadata.partner_id` of its events ('' for events that name none). */
  sender: string;
  /**
   * The receiver's clock minus the sender's (ms): positive when the sender's clock runs behind,
   * negative when it runs ahead (the low end, `lowEnd`, of `arrival - timestamp` over its last
   * hour of events: the offset plus its promptest deliveries' delay).
   */
  offset_ms: number;
  /** How many events the estimate is made of (the last hour's, or at least the last few). */
  samples: number;
  /** When this estimate was made (ISO). */
  at: string;
}

export interface SenderClocksOptions {
  /** How long a delivery counts towards the estimate (ms). @defaultValue 3600000 (an hour) */
  horizonMs?: number;
  /** Events needed before the estimate is used. @defaultValue 3 */
  minSamples?: number;
  /** Senders tracked at most (the least recently seen forgotten first). @defaultValue 256 */
  maxSenders?: number;
}

/** The sender of an event: its `metadata.partner_id`, when it is a short string. */
export function senderOf(event: Record<string, unknown>): string {
  const metadata = event.metadata;
  if (metadata === null || typeof metadata !== 'object') return '';
  const id = (metadata as Record<string, unknown>).partner_id;
  return typeof id === 'string' && id.length <= 128 ? id : '';
}

/** One minute of a sender's deliveries, by arrival: how many, and its two promptest. */
interface Minute {
  minute: number;
  count: number;
  /** The two smallest `arrival - timestamp` of the minute, smallest first. */
  lows: number[];
}

interface Track {
  /** Its deliveries' minutes, oldest first: the horizon's, and at least `minSamples` deliveries. */
  minutes: Minute[];
  /** The estimate published before (`seed`) and the minute it was published, for the horizon. */
  seed: { offset: number; minute: number } | undefined;
  /** `lowEnd`, once known. */
  estimate: number | undefined;
}

const MINUTE_MS = 60_000;

/**
 * Each sender's clock as this process sees it (docs/architecture.md → Order): the low end
 * (`lowEnd`), over its last hour of events, of when each arrived minus its `timestamp`. An
 * entity's events are ordered by their `timestamp` read on that clock (`orderTime`), so a sender
 * whose clock runs steadily ahead or behind (up to `MAX_CLOCK_SKEW_SECONDS`) has its events
 * ordered as it sent them; an event dated ahead of its sender's clock now and then, or late
 * deliveries however many, move it not.
 */
export class SenderClocks {
  private readonly tracks = new Map<string, Track>();
  private readonly horizonMinutes: number;
  private readonly minSamples: number;
  private readonly maxSenders: number;

  constructor(options: SenderClocksOptions = {}) {
    const horizonMs = options.horizonMs ?? 3_600_000;
    if (!(horizonMs >= MINUTE_MS)) throw new RangeError('horizonMs must be a minute or more');
    this.horizonMinutes = Math.ceil(horizonMs / MINUTE_MS);
    this.minSamples = options.minSamples ?? 3;
    this.maxSenders = options.maxSenders ?? 256;
  }

  /**
   * The time (ms, on the receiver's clock) that orders an event of `sender` among its entity's
   * events: its `timestamp` read on the sender's clock, never later than its arrival (so that an
   * event dated ahead of its sender's own clock counts as taken in when it was, and cannot make
   * the entity's later events look older). Learns the sender's clock from it afterwards.
   */
  orderTime(
    sender: string,
    timestampMs: number | undefined,
    arrivalMs: number,
  ): number | undefined {
    if (timestampMs === undefined || Number.isNaN(timestampMs)) return undefined;
    const offset = this.tracks.get(sender)?.estimate ?? 0;
    this.observe(sender, arrivalMs - timestampMs, arrivalMs);
    return Math.min(timestampMs + offset, arrivalMs);
  }

  /**
   * Starts from estimates published before (by this or another ingress process), each counted as
   * two of its sender's promptest minutes until the horizon has passed since it was published: a
   * restart does not forget a clock, and a process that starts loaded does not read its sender's
   * clock off its own late deliveries.
   */
  seed(published: readonly SenderClock[]): void {
    for (const clock of published) {
      if (this.tracks.has(clock.sender) || this.tracks.size >= this.maxSenders) continue;
      const minute = Math.floor(Date.parse(clock.at) / MINUTE_MS);
      this.tracks.set(clock.sender, {
        minutes: [],
        seed: { offset: clock.offset_ms, minute: Number.isNaN(minute) ? Infinity : minute },
        estimate: clock.offset_ms,
      });
    }
  }

  /** Every sender's estimate, for operators. */
  snapshot(now = new Date()): SenderClock[] {
    return [...this.tracks]
      .filter(([, track]) => track.estimate !== undefined)
      .map(([sender, track]) => ({
        sender,
        offset_ms: Math.round(track.estimate!),
        samples: track.minutes.reduce((sum, minute) => sum + minute.count, 0),
        at: now.toISOString(),
      }));
  }

  private observe(sender: string, sample: number, arrivalMs: number): void {
    let track = this.tracks.get(sender);
    if (track) {
      // Most recently seen last: the first is the one to forget.
      this.tracks.delete(sender);
    } else {
      track = { minutes: [], seed: undefined, estimate: undefined };
      if (this.tracks.size >= this.maxSenders) {
        this.tracks.delete(this.tracks.keys().next().value!);
      }
    }
    this.tracks.set(sender, track);
    let current = track.minutes.at(-1);
    // A receiver's clock set back counts on in the minute it had reached: minutes stay in order.
    const minute = Math.max(Math.floor(arrivalMs / MINUTE_MS), current?.minute ?? -Infinity);
    if (current?.minute !== minute) {
      current = { minute, count: 0, lows: [] };
      track.minutes.push(current);
    }
    current.count += 1;
    if (current.lows.length < 2 || sample < current.lows[1]!) {
      current.lows = [...current.lows, sample].sort((a, b) => a - b).slice(0, 2);
    }
    const count = this.forget(track, minute - this.horizonMinutes);
    if (track.seed || count >= this.minSamples) track.estimate = lowEnd(track);
  }

  /**
   * Drops the minutes (and the seed) at or before `oldest`, but keeps at least `minSamples`
   * deliveries: a sender seldom heard is read off its last few. Returns the deliveries kept.
   */
  private forget(track: Track, oldest: number): number {
    let count = track.minutes.reduce((sum, m) => sum + m.count, 0);
    while (
      track.minutes[0]!.minute <= oldest &&
      count - track.minutes[0]!.count >= this.minSamples
    ) {
      count -= track.minutes.shift()!.count;
    }
    if (track.seed && track.seed.minute <= oldest) track.seed = undefined;
    return count;
  }
}

/**
 * The second lowest `arrival - timestamp` kept (each minute's two lowest, the seed twice): the
 * offset plus the delay of the sender's promptest deliveries. Never the lowest: an event dated
 * ahead of its sender's clock is the lowest, so it moves it not. Late deliveries never raise it,
 * however many (a sender retrying after an outage, a loaded ingress process): the horizon's
 * promptest keep it. So events are ordered as dated, and capped at arrival only when they arrive
 * sooner than the promptest deliveries did, which one dated ahead of its sender's clock does.
 */
function lowEnd(track: Track): number {
  // One pass, no copy: it runs per webhook, over at most two numbers a minute.
  let lowest = track.seed?.offset ?? Infinity;
  let second = lowest;
  for (const { lows } of track.minutes) {
    for (const value of lows) {
      if (value < lowest) [lowest, second] = [value, lowest];
      else if (value < second) second = value;
    }
  }
  return second === Infinity ? lowest : second;
}

/** How often an ingress process publishes its estimates for operators (ms). */
export const SENDER_CLOCKS_PUBLISH_MS = 10_000;
/** How long a published estimate is kept without a newer one (s). */
const PUBLISHED_KEEP_SECONDS = 86_400;

/**
 * Publishes this process's estimates for operators, under the shared prefix (written every
 * `SENDER_CLOCKS_PUBLISH_MS`, never per webhook): each sender's latest estimate by any ingress
 * process. The ingress writes them; the dashboard reads them (`readSenderClocks`).
 */
export async function publishSenderClocks(
  redis: RedisClient,
  sharedPrefix: string,
  clocks: SenderClocks,
): Promise<void> {
  const snapshot = clocks.snapshot();
  if (snapshot.length === 0) return;
  const key = keys.senderClocks(sharedPrefix);
  await redis
    .multi()
    .hset(key, ...snapshot.flatMap((clock) => [clock.sender, JSON.stringify(clock)]))
    .expire(key, PUBLISHED_KEEP_SECONDS)
    .exec();
}

/** Every sender's published clock, by sender name. */
export async function readSenderClocks(
  redis: RedisClient,
  sharedPrefix: string,
): Promise<SenderClock[]> {
  const published = await redis.hgetall(keys.senderClocks(sharedPrefix));
  return Object.values(published)
    .map((text) => JSON.parse(text) as SenderClock)
    .sort((a, b) => a.sender.localeCompare(b.sender));
}
