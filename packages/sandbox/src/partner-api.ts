import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  method: string;
  path: string;
  /**
   * The W3C trace context headers (`traceparent`, `tracestate`) and `baggage`, each only when the
   * call carried it, so a test can tell what a caller passes on.
   */
  headers: {
    authorization?: string;
    'idempotency-key'?: string;
    traceparent?: string;
    tracestate?: string;
    baggage?: string;
  };
  body: unknown;
  /** Status the stand-in answered; 0 for a connection it reset. */
  status: number;
  /** When the request arrived. */
  received_at: Date;
  /** When it was answered (later than `received_at` for a held call). */
  at: Date;
}

export interface Failure {
  method?: string;
  /** Exact path, or a pattern. */
  path: string | RegExp;
  /**
   * Only calls whose path or JSON body contains this text (one customer's id: a poison input the
   * partner fails every time while it serves the rest).
   */
  carrying?: string;
  status: number;
  /** `Infinity`: every matching call, for good. @defaultValue 1 (unlimited with `forMs`) */
  times?: number;
  /** Answer every matching call this way for this long (ms from now), as in an outage. */
  forMs?: number;
  /** Seconds, sent as `Retry-After`. */
  retryAfter?: number;
  /** The answer's body: a string is sent as plain text, as it is; anything else as JSON. */
  body?: unknown;
  /**
   * Instead of answering `status`: `reset` ends the connection with no answer (recorded with
   * status 0, nothing applied); `timeout` applies the call (recorded 200) but answers only after
   * `delayMs`, as a partner whose answer is lost after it acted.
   */
  kind?: 'reset' | 'timeout';
  /** How long a `timeout` waits before it answers. @defaultValue 30000 */
  delayMs?: number;
}

export interface PartnerApiOptions {
  /** @defaultValue 0 (a free port) */
  port?: number;
  /**
   * The address to listen on: `0.0.0.0` for every IPv4 interface (in a container).
   * @defaultValue `'127.0.0.1'`
   */
  host?: string;
  /** When given, calls without a token it accepts get 401. */
  verifyToken?: (token: string) => Promise<boolean>;
  /** Keep every call in `calls`; off for long benchmark runs (`callCount` still counts). @defaultValue true */
  recordCalls?: boolean;
}

const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'] as const;

/** The trace context headers a request carried. */
const traceHeaders = (req: IncomingMessage) =>
  Object.fromEntries(
    TRACE_HEADERS.filter((name) => req.headers[name] !== undefined).map((name) => [
      name,
      String(req.headers[name]),
    ]),
  );

/** Shows a bearer token only by its end, so a listing never hands one out. */
const masked = (authorization: string | undefined) =>
  authorization ? `Bearer …${authorization.slice(-6)}` : undefined;

/** How a client on this machine reaches a server listening on `host` (a wildcard: by loopback). */
const urlHost = (host: string) => {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
};

/** The calls a control request names. */
interface PathSpec {
  path?: unknown;
  pathPattern?: unknown;
}

/** The path a control request names: `path` as it is, or `pathPattern` as a regular expression. */
function pathOf(spec: PathSpec | null): { path: string | RegExp } | { error: string } {
  if (typeof spec?.pathPattern === 'string' && spec.pathPattern) {
    try {
      return { path: new RegExp(spec.pathPattern) };
    } catch {
      return { error: 'pathPattern is not a regular expression' };
    }
  }
  if (typeof spec?.path === 'string' && spec.path) return { path: spec.path };
  return { error: 'need path (or pathPattern)' };
}

/**
 * A stand-in for the partner API: records every call, answers 200 `{ ok: true }` unless told to
 * fail, and has a control surface under `/__sandbox/` for local runs (`health`, `calls`,
 * `failures`, `holds`).
 */
export class PartnerApiStandIn {
  readonly calls: RecordedCall[] = [];
  /** Every call answered, recorded or not. */
  callCount = 0;
  private failures: (Failure & { left: number; until: number })[] = [];
  private holds: { path: string | RegExp; held: (() => void)[] }[] = [];
  /** The holds set up over HTTP (`/__sandbox/holds`). */
  private httpHolds: ReturnType<PartnerApiStandIn['hold']>[] = [];
  private readonly events = new EventEmitter();
  private server: Server;
  private port = 0;
  private readonly host: string;

  private constructor(private readonly options: PartnerApiOptions) {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.host = options.host ?? '127.0.0.1';
    this.events.setMaxListeners(0);
  }

  static async start(options: PartnerApiOptions = {}): Promise<PartnerApiStandIn> {
    const api = new PartnerApiStandIn(options);
    api.server.listen(options.port ?? 0, api.host);
    await once(api.server, 'listening');
    api.port = (api.server.address() as AddressInfo).port;
    return api;
  }

  /** `API_BASE_URL` from this machine. */
  get baseUrl(): string {
    return `http://${urlHost(this.host)}:${this.port}`;
  }

  /** Sets up failures; returns when they stop (epoch ms), for one set up `forMs`. */
  failNext(failure: Failure): number {
    const until = failure.forMs === undefined ? Infinity : Date.now() + failure.forMs;
    const left = failure.times ?? (failure.forMs === undefined ? 1 : Infinity);
    this.failures.push({ ...failure, left, until });
    return until;
  }

  callsFor(path: string | RegExp): RecordedCall[] {
    return this.calls.filter((call) =>
      typeof path === 'string' ? call.path === path : path.test(call.path),
    );
  }

  /** Resolves once `count` calls matching `predicate` have been recorded. */
  waitForCalls(
    predicate: (call: RecordedCall) => boolean,
    count: number,
    timeoutMs = 10_000,
  ): Promise<RecordedCall[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const matching = this.calls.filter(predicate);
        if (matching.length < count) return false;
        clearTimeout(timer);
        this.events.off('call', check);
        resolve(matching);
        return true;
      };
      const timer = setTimeout(() => {
        this.events.off('call', check);
        const seen = this.calls
          .map((call) => `${call.method} ${call.path} ${call.status}`)
          .join('\n  ');
        reject(new Error(`expected ${count} matching calls in ${timeoutMs} ms; seen:\n  ${seen}`));
      }, timeoutMs);
      if (!check()) this.events.on('call', check);
    });
  }

  /**
   * Leaves matching calls unanswered (for tests that kill a caller mid-call) until `release()`,
   * which records and answers them 200 (a caller may be gone by then, but the call did reach the
   * API); `held` resolves once `count` calls are being held.
   */
  hold(path: string | RegExp): {
    held(count: number): Promise<void>;
    /** Calls being held now. */
    holding(): number;
    release(): void;
  } {
    const hold = { path, held: [] as (() => void)[] };
    this.holds.push(hold);
    return {
      held: (count) =>
        new Promise((resolve) => {
          const check = () => {
            if (hold.held.length < count) return;
            this.events.off('held', check);
            resolve();
          };
          this.events.on('held', check);
          check();
        }),
      holding: () => hold.held.length,
      release: () => {
        this.holds = this.holds.filter((other) => other !== hold);
        for (const answer of hold.held) answer();
      },
    };
  }

  /**
   * `POST /__sandbox/holds` `{ "path" }` or `{ "pathPattern" }`: matching calls are left in flight;
   * `GET` says how many are held now; `DELETE` answers them (200) and holds no more.
   */
  private controlHolds(
    method: string,
    body: unknown,
    json: (status: number, payload: unknown) => void,
  ): void {
    if (method === 'GET') {
      json(200, { holding: this.httpHolds.reduce((sum, hold) => sum + hold.holding(), 0) });
    } else if (method === 'DELETE') {
      for (const hold of this.httpHolds.splice(0)) hold.release();
      json(200, { ok: true });
    } else if (method === 'POST') {
      const matcher = pathOf(body as PathSpec | null);
      if ('error' in matcher) {
        json(400, matcher);
        return;
      }
      this.httpHolds.push(this.hold(matcher.path));
      json(201, { ok: true });
    } else {
      json(405, { error: 'method_not_allowed' });
    }
  }

  reset(): void {
    this.calls.length = 0;
    this.failures = [];
  }

  /** Stops listening: calls get connection refused until `up()`. */
  async down(): Promise<void> {
    if (!this.server.listening) return;
    const closed = once(this.server, 'close');
    this.server.close();
    this.server.closeAllConnections();
    await closed;
  }

  async up(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(this.port, this.host);
    await once(this.server, 'listening');
  }

  stop(): Promise<void> {
    return this.down();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = new Date();
    const body = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path.startsWith('/__sandbox/')) {
      this.control(req.method ?? 'GET', path, body, res);
      return;
    }
    const reply = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      this.callCount++;
      if (this.options.recordCalls !== false)
        this.calls.push({
          method: req.method ?? 'GET',
          path,
          headers: {
            authorization: req.headers.authorization,
            'idempotency-key': req.headers['idempotency-key'] as string | undefined,
            ...traceHeaders(req),
          },
          body,
          status,
          received_at: receivedAt,
          at: new Date(),
        });
      if (status === 0) {
        // A reset: the connection ends with no answer.
        req.socket.destroy();
        this.events.emit('call');
        return;
      }
      // A text payload is sent as it is (a partner's plain-text error page), anything else as JSON.
      const text = typeof payload === 'string';
      res
        .writeHead(status, {
          'content-type': text ? 'text/plain; charset=utf-8' : 'application/json',
          ...headers,
        })
        .end(text ? payload : JSON.stringify(payload));
      this.events.emit('call');
    };
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (this.options.verifyToken && !(token && (await this.options.verifyToken(token)))) {
      reply(401, { error: 'invalid_token' });
      return;
    }
    const hold = this.holds.find((h) =>
      typeof h.path === 'string' ? h.path === path : h.path.test(path),
    );
    if (hold) {
      hold.held.push(() => reply(200, { ok: true }));
      this.events.emit('held');
      return;
    }
    const failure = this.failureFor(req.method, path, body);
    if (failure?.kind === 'timeout') {
      failure.left--;
      setTimeout(() => reply(200, { ok: true }), failure.delayMs ?? 30_000);
      return;
    }
    if (failure?.kind === 'reset') {
      failure.left--;
      reply(0, null);
      return;
    }
    if (failure) {
      failure.left--;
      const headers: Record<string, string> =
        failure.retryAfter !== undefined ? { 'retry-after': String(failure.retryAfter) } : {};
      reply(
        failure.status,
        failure.body ?? { error: `sandbox failure ${failure.status}` },
        headers,
      );
      return;
    }
    reply(200, { ok: true });
  }

  /** The first failure set up for this call that has answers left. */
  private failureFor(method: string | undefined, path: string, body: unknown) {
    let text: string | undefined;
    const carries = (needle: string) =>
      path.includes(needle) || (text ??= JSON.stringify(body) ?? '').includes(needle);
    return this.failures.find(
      (f) =>
        f.left > 0 &&
        Date.now() < f.until &&
        (!f.method || f.method === method) &&
        (typeof f.path === 'string' ? f.path === path : f.path.test(path)) &&
        (f.carrying === undefined || carries(f.carrying)),
    );
  }

  private control(method: string, path: string, body: unknown, res: ServerResponse): void {
    const json = (status: number, payload: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    if (path === '/__sandbox/health' && method === 'GET') {
      // For a health check (compose's): answers whenever the stand-in is listening.
      json(200, { ok: true });
    } else if (path === '/__sandbox/calls' && method === 'GET') {
      json(
        200,
        this.calls.map((call) => ({
          ...call,
          headers: { ...call.headers, authorization: masked(call.headers.authorization) },
        })),
      );
    } else if (path === '/__sandbox/failures' && method === 'POST') {
      const spec = body as {
        method?: string;
        path?: string;
        pathPattern?: string;
        carrying?: string;
        status?: number;
        times?: number;
        forSeconds?: number;
        retryAfter?: number;
        body?: unknown;
      };
      const matcher = pathOf(spec);
      if (typeof spec?.status !== 'number' || 'error' in matcher) {
        json(400, {
          error: 'error' in matcher ? matcher.error : 'need status and path (or pathPattern)',
        });
        return;
      }
      this.failNext({
        method: spec.method,
        path: matcher.path,
        carrying: typeof spec.carrying === 'string' ? spec.carrying : undefined,
        status: spec.status,
        times: spec.times,
        forMs: spec.forSeconds === undefined ? undefined : spec.forSeconds * 1000,
        retryAfter: spec.retryAfter,
        body: spec.body,
      });
      json(201, { ok: true });
    } else if (path === '/__sandbox/failures' && method === 'DELETE') {
      this.failures = [];
      json(200, { ok: true });
    } else if (path.startsWith('/__sandbox/holds')) {
      this.controlHolds(method, body, json);
    } else {
      json(404, { error: 'not_found' });
    }
  }
}

/** A request's body as JSON, or as text when it is not JSON, or null when empty. */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}
