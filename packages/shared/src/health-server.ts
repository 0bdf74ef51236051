import type { Server } from 'node:http';
import { createHttpServer } from './lifecycle.js';
import type { Registry } from 'prom-client';

/** `/healthz` and `/metrics` on a health port (the worker's, the recorder's). */
export function createHealthServer(registry: Registry): Server {
  return createHttpServer((req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else if (req.method === 'GET' && req.url === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
    }
  });
}
