import { describe, expect, it } from 'vitest';
import { twoWorkersCeiling } from './results.js';
import type { Figures } from './results.js';

const worker = (perS: number, workerMs: number, redisMs: number, sandboxMs: number) =>
  ({
    actions_per_s: perS,
    worker_cpu_ms_per_action: workerMs,
    redis_cpu_ms_per_action: redisMs,
    sandbox_cpu_ms_per_action: sandboxMs,
  }) as Figures['worker'];

describe("the two workers' ceiling", () => {
  it("is the machine's cores over one action's CPU in all, over one worker's rate", () => {
    // 1 ms of CPU per action in all on 2 cores: at most 2,000 actions/s, twice 1,000/s.
    expect(twoWorkersCeiling(worker(1000, 0.5, 0.3, 0.2), 2)).toBe(2);
    // One worker already drains what the two cores can carry: a second cannot add anything.
    expect(twoWorkersCeiling(worker(2000, 0.6, 0.25, 0.15), 2)).toBe(1);
    expect(twoWorkersCeiling(worker(2000, 0.6, 0.25, 0.15), 4)).toBe(2);
  });
});
