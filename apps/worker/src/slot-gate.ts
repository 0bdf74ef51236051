/**
 * The slots of a worker process's jobs at once (`WORKER_CONCURRENCY`), shared by the BullMQ
 * workers of its partitions: a processor takes a slot before it runs and gives it back after,
 * first come first served. `onChange` is called whenever the number of free slots changes.
 */
export class SlotGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most processors that ran at once, and the most that waited for a slot. */
  readonly peak = { running: 0, waiting: 0 };

  constructor(
    readonly slots: number,
    private readonly onChange: () => void = () => undefined,
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError('slots must be at least 1');
  }

  /** Slots no processor holds. */
  get free(): number {
    return this.slots - this.running;
  }

  /** Runs `work` in a slot, waiting for one if all are taken. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> | undefined {
    if (this.running < this.slots) {
      this.running++;
      this.peak.running = Math.max(this.peak.running, this.running);
      this.onChange();
      return undefined;
    }
    // The slot is handed over by `release`, still counted as taken.
    const granted = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.peak.waiting = Math.max(this.peak.waiting, this.waiting.length);
    return granted;
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) {
      next();
      return;
    }
    this.running--;
    this.onChange();
  }
}
