// An open-loop HTTP load at an even pace, for the flood and latency phases. autocannon's `overallRate` sends
// each connection's share of a second back to back at the start of that second, so its samples
// would bunch in a few milliseconds a second and could all miss (or all hit) the flood's passes
// through the ingress's fixed one-second rate-limit window; nor can it send from another source
// address. Here request i is due at start + i / rate, and its latency counts from then, so a
// stalled server is measured by the wait it causes, not hidden by it.
import { Agent, request } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';

export interface PacedRequest {
  path: string;
  body: string | Buffer;
  /** The answers are counted by label, then by status. @defaultValue `'all'` */
  label?: string;
}

export interface PacedOptions {
  url: string;
  /** Requests per second, evenly spaced. */
  rate: number;
  /** The longest the sending lasts; it also stops when `signal` aborts. */
  seconds: number;
  /** Keep-alive sockets at most. */
  connections: number;
  /** When every socket is busy: `queue` the request (its wait counts in its latency) or `skip` it. */
  whenBusy: 'queue' | 'skip';
  next: () => PacedRequest;
  /** The source address to send from: another loopback address is another sender. */
  localAddress?: string;
  signal?: AbortSignal;
  /** A request not answered in this time is given up and counted as an error. @defaultValue 30000 */
  timeoutMs?: number;
  /** Called with each answer's status and body, once it has been read whole. */
  onAnswer?: (status: number, body: string) => void;
}

export interface PacedResult {
  sent: number;
  /** Requests not sent because every socket was busy (`whenBusy: 'skip'`). */
  skipped: number;
  /** Requests with no answer: connection errors and time-outs. */
  errors: number;
  /** Answers by label, then by status code. */
  answers: Record<string, Record<string, number>>;
  /** Answers other than 200. */
  non200: number;
  /**
   * Milliseconds from when each request was due to the end of its answer, or to when it was given
   * up: a stalled server's time-outs count (as the least they cost), not only its answers.
   */
  latenciesMs: number[];
  /** How long the sending lasted. */
  seconds: number;
}

/**
 * One POST through `agent`: resolves with the answer's status once it has been read whole, or
 * with undefined on a connection error or when `timeoutMs` have passed first; never rejects.
 */
function post(
  agent: Agent,
  url: URL,
  body: string | Buffer,
  timeoutMs: number,
  onAnswer?: PacedOptions['onAnswer'],
) {
  return new Promise<number | undefined>((resolve) => {
    const outgoing = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        signal: AbortSignal.timeout(timeoutMs),
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('error', () => resolve(undefined));
        answer.on('end', () => {
          onAnswer?.(answer.statusCode ?? 0, Buffer.concat(chunks).toString());
          resolve(answer.statusCode);
        });
        if (onAnswer) answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        else answer.resume();
      },
    );
    outgoing.on('error', () => resolve(undefined));
    outgoing.end(body);
  });
}

/** Counts an answer (or its absence, `status` undefined) and its latency into `result`. */
function record(result: PacedResult, label: string, status: number | undefined, ms: number) {
  if (status === undefined) {
    result.errors++;
  } else {
    const byStatus = (result.answers[label] ??= {});
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (status !== 200) result.non200++;
  }
  result.latenciesMs.push(ms);
}

/** Posts `next()` at `rate` per second for `seconds`; resolves once every request has settled. */
export async function postPaced(options: PacedOptions): Promise<PacedResult> {
  const { rate, connections, signal } = options;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const agent = new Agent({
    keepAlive: true,
    maxSockets: connections,
    localAddress: options.localAddress,
  });
  const result: PacedResult = {
    sent: 0,
    skipped: 0,
    errors: 0,
    answers: {},
    non200: 0,
    latenciesMs: [],
    seconds: 0,
  };
  let inFlight = 0;
  const send = async (next: PacedRequest, due: number) => {
    inFlight++;
    const url = new URL(next.path, options.url);
    const status = await post(agent, url, next.body, timeoutMs, options.onAnswer);
    inFlight--;
    record(result, next.label ?? 'all', status, performance.now() - due);
  };

  const pending: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.floor(options.seconds * rate);
  for (let i = 0; i < total && !signal?.aborted; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await delay(wait, undefined, { signal }).catch(() => undefined);
    if (signal?.aborted) break;
    if (options.whenBusy === 'skip' && inFlight >= connections) {
      result.skipped++;
      continue;
    }
    result.sent++;
    pending.push(send(options.next(), due));
  }
  // The last request was due 1/rate before the end of its slot: count the slot whole.
  result.seconds = Math.max(
    (performance.now() - started) / 1000,
    (result.sent + result.skipped) / rate,
  );
  await Promise.all(pending);
  agent.destroy();
  return result;
}
