/**
 * The slots of a worker process's jobs at once (`WORKER_CONCURRENCY`), shared by the BullMQ
 * workers of its partitions: a processor takes a slot before it runs and gives it back after,
 * first come first served. `onFull(true)` is called when the last slot is taken and `onFull(false)`
 * when one frees again, so that the partitions' workers stop fetching jobs that could only wait.
 */
export class SlotGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most processors that ran at once, and the most that waited for a slot. */
  readonly peak = { running: 0, waiting: 0 };

  constructor(
    readonly slots: number,
    private readonly onFull: (full: boolean) => void = () => undefined,
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError('slots must be at least 1');
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
      this.taken();
      return undefined;
    }
    // The slot is handed over by `release`, still counted as taken.
    const granted = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.peak.waiting = Math.max(this.peak.waiting, this.waiting.length);
    return granted;
  }

  private taken(): void {
    this.running++;
    this.peak.running = Math.max(this.peak.running, this.running);
    if (this.running === this.slots) this.onFull(true);
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) {
      next();
      return;
    }
    this.running--;
    if (this.running === this.slots - 1) this.onFull(false);
  }
}
