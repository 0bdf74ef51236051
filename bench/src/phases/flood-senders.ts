// The flood phase's two senders against one ingress: the legitimate one, signed events paced from
// 127.0.0.1, and the unsigned flood from the settings' other address.
import { eventDefinitionByKind } from '@pw/shared/events';
import type { BenchRun } from '../bench-run.js';
import type { FloodBody } from '../flood-bodies.js';
import { postPaced } from '../paced.js';
import type { PacedResult } from '../paced.js';
import { treeCpuMs } from '../process-usage.js';
import { whileUp } from '../processes.js';
import type { Server } from '../processes.js';
import type { FloodSettings } from './flood.js';

export class FloodSenders {
  private readonly flood = new AbortController();
  private readonly path = eventDefinitionByKind('quote').path;

  constructor(
    private readonly bench: BenchRun,
    private readonly settings: FloodSettings,
    private readonly ingress: Server,
  ) {}

  /** Fresh signed events at `rate` for `seconds`, queued when every connection is busy. */
  legitimate(seconds: number, rate: number = this.settings.legitRate): Promise<PacedResult> {
    const { pool } = this.bench;
    pool.fill(Math.ceil(seconds * rate) + 1);
    const sending = postPaced({
      url: this.ingress.url,
      rate,
      seconds,
      connections: this.settings.legitConnections,
      whenBusy: 'queue',
      timeoutMs: this.settings.requestTimeoutMs,
      next: () => pool.take(),
      signal: this.bench.signal,
    });
    return whileUp(sending, this.ingress.child);
  }

  /** `bodies` in turn at `rate` for `seconds` or until `stopFlood()`, skipped when all are busy. */
  unsigned(bodies: readonly FloodBody[], rate: number, seconds: number): Promise<PacedResult> {
    let sent = 0;
    return postPaced({
      url: this.ingress.url,
      rate,
      seconds,
      connections: this.settings.connections,
      whenBusy: 'skip',
      timeoutMs: this.settings.requestTimeoutMs,
      localAddress: this.settings.address,
      next: () => {
        const next = bodies[sent++ % bodies.length]!;
        return { path: this.path, body: next.body, label: next.shape };
      },
      signal: AbortSignal.any([this.flood.signal, this.bench.signal]),
    });
  }

  /** Ends every unsigned sending under way. */
  stopFlood(): void {
    this.flood.abort();
  }

  /** Milliseconds of the ingress's CPU per request that `work` sends. */
  async cpuPerRequest(work: () => Promise<PacedResult>) {
    const before = treeCpuMs(this.ingress.child.pid);
    const result = await whileUp(work(), this.ingress.child);
    const cpuMs = (treeCpuMs(this.ingress.child.pid) - before) / Math.max(1, result.sent);
    return { result, cpuMs };
  }
}
