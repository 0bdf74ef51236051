import type { Redis } from 'ioredis';
import { circuitKeys } from '@pw/shared/circuits';
import { channels } from '@pw/shared/queue';

export interface OpenCircuit {
  /** Consecutive retryable failures that opened it. */
  failures: number;
  /** When its next probe falls due, from now (ms). */
  probeInMs: number;
  /** The jobs it holds (none has failed), each with its order (creation time). */
  held: { id: string; order: number }[];
}

/**
 * A circuit open as the workers' breaker leaves it (apps/worker's `CircuitBreaker`, which other
 * apps cannot import): for the tests of what reads circuits. apps/worker/test checks that it
 * matches what the breaker writes.
 */
export async function openCircuit(
  redis: Redis,
  queuePrefix: string,
  target: string,
  circuit: OpenCircuit,
): Promise<void> {
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const keys = circuitKeys(queuePrefix, target);
  const transaction = redis.multi().sadd(keys.targets, target);
  // The newest held job is first in line (apps/worker's includes/circuitLine.lua), told to come
  // back for the next probe.
  const first = [...circuit.held].sort((a, b) => b.order - a.order)[0];
  transaction.hset(keys.circuit, {
    state: 'open',
    reason: 'failures',
    since: now,
    failures: circuit.failures,
    // Its last failure, which a 2xx to a call sent before it does not undo.
    failed_at: now,
    warm: 0,
    next_probe_at: now + circuit.probeInMs,
    ...(first ? { probe_next: first.id } : {}),
  });
  for (const job of circuit.held) transaction.zadd(keys.held, job.order, job.id);
  // As every change to a circuit is: the workers' copies hear of it.
  transaction.publish(channels.circuitChanged(queuePrefix), target);
  await transaction.exec();
}
