import { describe, expect, it } from 'vitest';
import { SlotGate } from './slot-gate.js';

/** A job that runs until the test ends it. */
function pending() {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { done, end };
}

describe('the slot gate', () => {
  it('runs as many jobs at once as it has slots; the others wait, first come first served', async () => {
    const free: number[] = [];
    const gate: SlotGate = new SlotGate(2, () => free.push(gate.free));
    const jobs = [pending(), pending(), pending(), pending()];
    const started: number[] = [];
    const runs = jobs.map((job, n) =>
      gate.run(async () => {
        started.push(n);
        await job.done;
        return n;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(free).toEqual([1, 0]);

    jobs[1]!.end();
    await runs[1];
    await Promise.resolve();
    // The slot went to the first that waited, and the gate stayed full.
    expect(started).toEqual([0, 1, 2]);
    expect(free).toEqual([1, 0]);

    for (const job of jobs) job.end();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(free).toEqual([1, 0, 1, 2]);
    expect(gate.peak).toEqual({ running: 2, waiting: 2 });
  });

  it('gives the slot back when a job fails', async () => {
    const gate = new SlotGate(1);
    await expect(gate.run(() => Promise.reject(new Error('failed')))).rejects.toThrow('failed');
    expect(await gate.run(() => Promise.resolve('next'))).toBe('next');
  });
});
