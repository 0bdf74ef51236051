import { keys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis.js';

/** What an ingress process estimates of one sender's clock, as operators see it. */
export interface SenderClock {
  /** `metadata.partner_id` of its events ('' for events that name none). */
  sender: string;
  /**
   * The receiver's clock minus the sender's (ms): positive when the sender's clock runs behind,
   * negative when it runs ahead (the second lowest, `secondLowest`, of `arrival - timestamp` over
   * its last hour's events: the offset plus its promptest deliveries' delay).
   */
  offset_ms: number;
  /** How many events of the last hour the estimate is made of. */
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

/** One minute of a sender's deliveries, by arrival: how many, and their two promptest. */
interface Minute {
  minute: number;
  count: number;
  /** The two smallest `arrival - timestamp` of the minute, smallest first. */
  lows: number[];
  /** Holds the estimate published before (`seed`), as two of its promptest deliveries. */
  seeded?: true;
}

interface Track {
  /** Its deliveries' minutes within the horizon, oldest first. */
  minutes: Minute[];
  /** The estimate published before (`seed`), until the sender's first event here. */
  seed: number | undefined;
  /** `secondLowest`, once known. */
  estimate: number | undefined;
}

const MINUTE_MS = 60_000;

/**
 * Each sender's clock as this process sees it (docs/architecture.md → Order): the second lowest
 * (`secondLowest`), over its last hour's events, of when each arrived minus its `timestamp`. An
 * entity's events are ordered by their `timestamp` read on that clock (`orderTime`), so a sender
 * whose clock runs steadily ahead or behind (up to `MAX_CLOCK_SKEW_SECONDS`) has its events
 * ordered as it sent them; one event dated ahead of its sender's clock, or late deliveries
 * however many, move it not.
 */
export class SenderClocks {
  private readonly tracks = new Map<string, Track>();
  private readonly horizonMs: number;
  private readonly minSamples: number;
  private readonly maxSenders: number;

  constructor(options: SenderClocksOptions = {}) {
    this.horizonMs = options.horizonMs ?? 3_600_000;
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
   * two of its sender's promptest deliveries for the horizon: a restart does not forget a clock,
   * and a process that starts loaded does not read its sender's clock off its own late deliveries.
   */
  seed(published: readonly SenderClock[]): void {
    for (const clock of published) {
      if (this.tracks.has(clock.sender) || this.tracks.size >= this.maxSenders) continue;
      this.tracks.set(clock.sender, {
        minutes: [],
        seed: clock.offset_ms,
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
    const minute = Math.floor(arrivalMs / MINUTE_MS);
    if (track.seed !== undefined) {
      // Kept as this minute's promptest two: the published clock holds for the horizon.
      track.minutes.push({ minute, count: 0, lows: [track.seed, track.seed], seeded: true });
      track.seed = undefined;
    }
    let current = track.minutes.at(-1);
    if (current?.minute !== minute) {
      current = { minute, count: 0, lows: [] };
      track.minutes.push(current);
    }
    current.count += 1;
    current.lows = [...current.lows, sample].sort((a, b) => a - b).slice(0, 2);
    const oldest = minute - Math.ceil(this.horizonMs / MINUTE_MS);
    while (track.minutes[0]!.minute <= oldest) track.minutes.shift();
    const count = track.minutes.reduce((sum, m) => sum + m.count, 0);
    if (count < this.minSamples && !track.minutes.some((m) => m.seeded)) return;
    track.estimate = secondLowest(track.minutes.flatMap((m) => m.lows));
  }
}

/**
 * The second lowest `arrival - timestamp` within the horizon: the offset plus the delay of the
 * sender's promptest deliveries. Never the lowest: one event dated ahead of its sender's clock
 * moves it not. Late deliveries never raise it, however many (a sender retrying after an outage,
 * a loaded ingress process): an hour's promptest deliveries keep it, and clocks drift by
 * milliseconds an hour. So events are ordered as dated and capped at arrival only when they arrive
 * sooner than the promptest deliveries did, which one dated ahead of its sender's clock does.
 */
function secondLowest(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(1, sorted.length - 1)]!;
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
