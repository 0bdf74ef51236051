import { circuitKeys } from '@pw/shared/circuits';
import { channels } from '@pw/shared/queue';
import type { Logger, RedisClient } from '@pw/shared/runtime';

export interface CircuitCopySettings {
  /** The shared prefix (`QUEUE_PREFIX`), where the circuits live. */
  queuePrefix: string;
  /** How often every circuit is read again, whatever was heard (`CIRCUIT_PROBE_INTERVAL_MS`). */
  refreshMs: number;
  log: Logger;
}

interface Entry {
  clean: boolean;
  /** Counts the changes heard: a read begun before the last one is not taken. */
  version: number;
  reading: boolean;
  again: boolean;
}

/** A circuit is clean when closed, with no failure since its last answer, and warm. */
const isClean = ([state, failures, warm]: (string | null)[]) =>
  state !== 'open' && Number(failures ?? 0) === 0 && warm === '1';

/**
 * This process's copy of the circuits it uses, to tell whether a try may skip the circuit: only
 * when the circuit is closed and clean is that exact (`clean`). Every change that makes a
 * circuit clean or not, opens, closes or overrides it is announced on
 * `channels.circuitChanged` with the target's name: the copy forgets the target's cleanness at
 * once and reads it again. It is also read again every `refreshMs`, and all of it when the
 * subscription (re)connects; while the subscription is down, nothing counts as clean.
 */
export class CircuitCopy {
  private readonly entries = new Map<string, Entry>();
  private listening = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly subscriber: RedisClient,
    private readonly settings: CircuitCopySettings,
  ) {}

  get channel(): string {
    return channels.circuitChanged(this.settings.queuePrefix);
  }

  /** Subscribes, then reads `targets`; a target first asked for later is read then. */
  async start(targets: readonly string[]): Promise<void> {
    this.subscriber.on('message', (channel: string, target: string) => {
      if (channel === this.channel) this.changed(target);
    });
    // ioredis says `ready` before it subscribes again: the copy counts as live, and is read
    // again, only once a subscription of its own is confirmed, so no change falls between.
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(this.channel).then(
        () => {
          this.listening = true;
          this.refresh();
        },
        // Closed again before it was confirmed: the next `ready` tries again.
        () => undefined,
      );
    });
    this.subscriber.on('close', () => (this.listening = false));
    for (const target of targets) this.entry(target);
    await this.subscriber.subscribe(this.channel);
    this.listening = true;
    this.refresh();
    this.timer = setInterval(() => this.refresh(), this.settings.refreshMs);
    this.timer.unref();
  }

  /** True when the circuit is known closed and clean (the try needs no circuit command). */
  clean(target: string): boolean {
    return this.listening && this.entry(target).clean;
  }

  /** A change to the circuit, heard or made here: not clean until read again. */
  changed(target: string): void {
    const entry = this.entry(target);
    entry.version++;
    entry.clean = false;
    void this.read(target, entry);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private entry(target: string): Entry {
    let entry = this.entries.get(target);
    if (!entry) {
      entry = { clean: false, version: 0, reading: false, again: false };
      this.entries.set(target, entry);
      void this.read(target, entry);
    }
    return entry;
  }

  private refresh(): void {
    for (const [target, entry] of this.entries) void this.read(target, entry);
  }

  /** Reads the circuit; one read at a time per target, once more if asked meanwhile. */
  private async read(target: string, entry: Entry): Promise<void> {
    if (entry.reading) {
      entry.again = true;
      return;
    }
    entry.reading = true;
    try {
      do {
        entry.again = false;
        const version = entry.version;
        const fields = await this.redis.hmget(
          circuitKeys(this.settings.queuePrefix, target).circuit,
          'state',
          'failures',
          'warm',
        );
        if (version === entry.version) entry.clean = isClean(fields);
        else entry.again = true;
      } while (entry.again);
    } catch (error) {
      entry.clean = false;
      this.settings.log.debug({ err: error, target }, 'circuit not read: the copy says suspect');
    } finally {
      entry.reading = false;
    }
  }
}
