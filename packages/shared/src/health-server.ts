import type { Server } from 'node:http';
import { createHttpServer } from './lifecycle.js';
import type { Registry } from 'prom-client';

/**
 * `/healthz`, `/readyz` and `/metrics` on a health port (the worker's, the recorder's): `/healthz`
 * answers as soon as the process listens (alive, if waiting for Redis); `/readyz` answers 200 once
 * `ready()` says the process does its work, 503 before.
 */
export function createHealthServer(registry: Registry, ready: () => boolean = () => true): Server {
  return createHttpServer((req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else if (req.method === 'GET' && req.url === '/readyz') {
      const up = ready();
      res
        .writeHead(up ? 200 : 503, { 'content-type': 'application/json' })
        .end(up ? '{"status":"ready"}' : '{"status":"starting"}');
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
