import { once } from 'node:events';
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { Logger } from './logger.js';
import { flushTracing } from './tracing.js';

/**
 * Time-outs on every listening socket (docs/reliability-and-security.md#security): a client that
 * trickles its headers or its body cannot hold a connection, and the memory behind it, for longer
 * than these.
 */
export const SERVER_TIMEOUTS = Object.freeze({
  /** The whole request line and headers. */
  headersTimeoutMs: 10_000,
  /** The whole request, body included. */
  requestTimeoutMs: 30_000,
  /** How often Node checks the two above (its default, 30 s, would let them overrun by that). */
  checkIntervalMs: 1_000,
});

/** An HTTP server for `handler` (an Express app or a plain listener) with SERVER_TIMEOUTS. */
export function createHttpServer(handler: RequestListener): Server {
  return createServer(
    {
      headersTimeout: SERVER_TIMEOUTS.headersTimeoutMs,
      requestTimeout: SERVER_TIMEOUTS.requestTimeoutMs,
      connectionsCheckingInterval: SERVER_TIMEOUTS.checkIntervalMs,
    },
    handler,
  );
}

/**
 * Stops an HTTP server gracefully: no new connections, requests in flight answered, idle
 * keep-alive connections closed; whatever is still open after `graceMs` is cut.
 */
export async function closeServer(server: Server, graceMs: number, log: Logger): Promise<void> {
  if (!server.listening) return;
  const force = setTimeout(() => {
    log.warn('grace period over: closing the remaining connections');
    server.closeAllConnections();
  }, graceMs);
  force.unref();
  const closed = once(server, 'close');
  server.close();
  server.closeIdleConnections();
  await closed;
  clearTimeout(force);
}

/** Runs `stop` once on the first SIGTERM or SIGINT, then exits 0 (1 if stopping failed). */
export function onShutdownSignals(log: Logger, stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      async () => {
        log.info('stopped');
        // The spans still buffered, exported (a no-op without tracing).
        await flushTracing().catch(() => undefined);
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'stopping failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => handle('SIGTERM'));
  process.on('SIGINT', () => handle('SIGINT'));
}

/**
 * What a running app offers its composition root: `main.ts` stops it on SIGTERM or SIGINT, and a
 * test that runs the whole system in one process stops it the same way.
 */
export interface RunningProcess {
  /** Stops it as its shutdown signal does: work in hand finished, clients closed. */
  stop(signal: string): Promise<void>;
}

/**
 * Called when the app cannot go on (its port taken, another partition count stored): `main.ts`
 * logs it and exits 1; a test running the app in its own process fails instead.
 */
export type OnFatal = (message: string, fields?: object) => void;

/** The composition root's `OnFatal`: logs the message (with `fields`), then exits 1. */
export const exitOnFatal =
  (log: Logger): OnFatal =>
  (message, fields = {}) => {
    log.fatal(fields, message);
    process.exit(1);
  };
