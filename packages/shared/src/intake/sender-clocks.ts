import { keys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis.js';

/** What an ingress process estimates of one sender's clock, as operators see it. */
export interface SenderClock {
  /** `metadata.partner_id` of its events ('' for events that name none). */
  sender: string;
  /**
   * The receiver's clock minus the sender's (ms): positive when the sender's clock runs behind,
   * negative when it runs ahead (the low end, `lowEnd`, of `arrival - timestamp` over its recent
   * events: the offset plus its promptest deliveries' delay).
   */
  offset_ms: number;
  /** How many recent events the estimate is made of. */
  samples: number;
  /** When this estimate was made (ISO). */
  at: string;
}

export interface SenderClocksOptions {
  /** The recent events kept per sender. @defaultValue 101 */
  window?: number;
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

interface Track {
  /** `arrival - timestamp` of its recent events, oldest first. */
  samples: number[];
  /** `lowEnd(samples)`; before `minSamples`, a published one (`seed`), or undefined. */
  estimate: number | undefined;
}

/**
 * Each sender's clock as this process sees it (docs/architecture.md → Order): the low end
 * (`lowEnd`), over its recent events, of when each arrived minus its `timestamp`. An entity's
 * events are ordered by their `timestamp` read on that clock (`orderTime`), so a sender whose
 * clock runs steadily ahead or behind (up to `MAX_CLOCK_SKEW_SECONDS`) has its events ordered as
 * it sent them; one event dated ahead of its sender's clock, or a late delivery, moves it not.
 */
export class SenderClocks {
  private readonly tracks = new Map<string, Track>();
  private readonly window: number;
  private readonly minSamples: number;
  private readonly maxSenders: number;

  constructor(options: SenderClocksOptions = {}) {
    this.window = options.window ?? 101;
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
    this.observe(sender, arrivalMs - timestampMs);
    return Math.min(timestampMs + offset, arrivalMs);
  }

  /**
   * Starts from estimates published before (by this or another ingress process), each used until
   * this process has seen `minSamples` events of its sender: a restart does not forget a clock.
   */
  seed(published: readonly SenderClock[]): void {
    for (const clock of published) {
      if (this.tracks.has(clock.sender) || this.tracks.size >= this.maxSenders) continue;
      this.tracks.set(clock.sender, { samples: [], estimate: clock.offset_ms });
    }
  }

  /** Every sender's estimate, for operators. */
  snapshot(now = new Date()): SenderClock[] {
    return [...this.tracks]
      .filter(([, track]) => track.estimate !== undefined)
      .map(([sender, track]) => ({
        sender,
        offset_ms: Math.round(track.estimate!),
        samples: track.samples.length,
        at: now.toISOString(),
      }));
  }

  private observe(sender: string, sample: number): void {
    let track = this.tracks.get(sender);
    if (track) {
      // Most recently seen last: the first is the one to forget.
      this.tracks.delete(sender);
    } else {
      track = { samples: [], estimate: undefined };
      if (this.tracks.size >= this.maxSenders) {
        this.tracks.delete(this.tracks.keys().next().value!);
      }
    }
    this.tracks.set(sender, track);
    track.samples.push(sample);
    if (track.samples.length > this.window) track.samples.shift();
    if (track.samples.length >= this.minSamples) track.estimate = lowEnd(track.samples);
  }
}

/**
 * The tenth percentile, never the smallest: `arrival - timestamp` is the offset plus each
 * delivery's delay, so the low end is the offset plus the promptest deliveries' delay. Events
 * dated further apart than that order as dated, whatever order they arrive in; a median, which a
 * loaded sender's late deliveries pushed up by a second or more, capped events sent together
 * dated a second apart at their arrival, and so ordered them as they arrived. Never the smallest,
 * nor anything the lowest tenth of the samples alone decides: one event dated ahead of its
 * sender's clock moves it not.
 */
function lowEnd(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.floor(sorted.length / 10))]!;
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
