// The soak's system listens on this machine alone: the kernel's own table says where each app's
// port listens, and a run whose apps listen beyond loopback fails.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { listeningAddresses, loopbackOnly } from '../src/listening.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

async function listenOn(host?: string): Promise<number> {
  const server = createServer();
  servers.push(server);
  server.listen({ port: 0, host });
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

it('reads where a port listens: loopback alone, or every interface', async () => {
  const loopback = await listenOn('127.0.0.1');
  const everywhere = await listenOn();
  expect(await listeningAddresses([loopback])).toEqual(['127.0.0.1']);
  const wide = await listeningAddresses([everywhere]);
  expect(wide.length).toBeGreaterThan(0);
  expect(loopbackOnly(wide)).toBe(false);
  expect(loopbackOnly(await listeningAddresses([loopback, everywhere]))).toBe(false);
  expect(loopbackOnly(['127.0.0.1', '::1'])).toBe(true);
});
