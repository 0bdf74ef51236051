import { describe, expect, it } from 'vitest';
import { redisFiguresOf } from './figures.js';
import type { Part, PartCost } from './figures.js';

const cost = (cpuUs: number): PartCost => ({ cpu_us: cpuUs, reads: 1, commands: {} });

describe("the bench's Redis figures of a round", () => {
  it('add up the parts of each path, compare them, and spread the bytes left over the webhooks', () => {
    const costs: Record<Part, PartCost> = {
      intake: cost(60),
      worker: cost(100),
      recorder: cost(10),
      raw_enqueue: cost(50),
      raw_worker: cost(80),
    };
    const kinds = new Map([
      ['dedup with first acks (hash per hour)', { keys: 2, bytes: 270_000 }],
      ['latest (per entity)', { keys: 2010, bytes: 231_150 }],
    ]);
    expect(redisFiguresOf(costs, { kinds, webhooks: 2010 })).toEqual({
      redis_cpu_ms_per_action: 0.17,
      raw_redis_cpu_ms_per_action: 0.13,
      redis_cpu_per_action_vs_raw: 1.31,
      actions_per_redis_core: 5882,
      redis_bytes_per_finished_webhook: 249,
    });
  });
});
