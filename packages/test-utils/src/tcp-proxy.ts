import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL, Redis), for a test to cut the
 * line between a client and that server without stopping the server, which others may share.
 */
export interface TcpProxy {
  /** The port it listens on; point the client at `127.0.0.1:<port>`. */
  readonly port: number;
  /** Ends every connection through it; new ones are accepted and ended at once until `mend()`. */
  cut(): void;
  /** Lets connections through again. */
  mend(): void;
  /**
   * Sends new connections to `target` from now on (connections made before stay where they go),
   * as a failover's DNS name or virtual address moves to the promoted server.
   */
  retarget(target: { host: string; port: number }): void;
  close(): Promise<void>;
}

/**
 * Starts a proxy to `target`: every connection to it is piped to a connection of its own there.
 * `delayMs`: what a client sends reaches the server that much later, in order (a slow line).
 */
export async function startTcpProxy(
  target: { host: string; port: number },
  options: { delayMs?: number } = {},
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let through = true;
  let to = target;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    track(client);
    if (!through) return void client.destroy();
    const upstream = createConnection(to);
    track(upstream);
    // Either side failing ends both, as a broken line would.
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    const delayMs = options.delayMs ?? 0;
    if (delayMs > 0) {
      // Timers of one delay fire in the order they were set: the bytes keep their order.
      client.on('data', (chunk) => setTimeout(() => upstream.write(chunk), delayMs));
      upstream.pipe(client);
    } else {
      client.pipe(upstream).pipe(client);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      through = false;
      cutAll();
    },
    mend() {
      through = true;
    },
    retarget(next) {
      to = next;
    },
    async close() {
      cutAll();
      server.close();
      await once(server, 'close');
    },
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.toString();
}
