import { once } from 'node:events';
import type { Server } from 'node:http';
import type { Logger } from './logger.js';

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
      () => {
        log.info('stopped');
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
