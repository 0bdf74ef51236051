// The sandbox's partner-API stand-in as a network service, for `docker compose up`: the stand-in
// listens on the loopback interface only, so a TCP relay on every interface puts it on the
// compose network. Token verification is off (any bearer token is accepted; a call without one
// still gets 401): the tokens come from Keycloak, which the stand-in cannot check by itself.
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { PartnerApiStandIn } from '../../packages/sandbox/src/partner-api.js';

export interface PartnerApiServer {
  api: PartnerApiStandIn;
  /** The port of the relay (the service's port). */
  port: number;
  stop(): Promise<void>;
}

/** Joins two sockets; either one closing or failing closes both. */
function relay(client: Socket, upstream: Socket): void {
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
  client.pipe(upstream).pipe(client);
}

/** Starts the stand-in and a relay to it on `host:port` (port 0: a free one). */
export async function startPartnerApiServer(options: {
  port: number;
  host?: string;
}): Promise<PartnerApiServer> {
  const api = await PartnerApiStandIn.start({ port: 0, verifyToken: () => Promise.resolve(true) });
  const inner = new URL(api.baseUrl);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    relay(client, connect(Number(inner.port), inner.hostname));
  });
  server.listen(options.port, options.host ?? '0.0.0.0');
  await once(server, 'listening');
  return {
    api,
    port: (server.address() as AddressInfo).port,
    async stop() {
      const closed = once(server, 'close');
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
      await api.stop();
    },
  };
}
