import express from 'express';
import helmet from 'helmet';
import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { openApiDocument } from '@pw/shared/openapi';
import type { Logger } from '@pw/shared/runtime';
import { RequestRejectedError, sendError } from './error-response.js';
import type { IngressMetrics } from './metrics.js';
import { webhookRoutes } from './webhook-routes.js';
import type { WebhookRouteDeps } from './webhook-routes.js';

export interface AppDeps extends WebhookRouteDeps {
  /** Pinged by `/readyz`. */
  redis: Pick<Redis, 'ping'>;
  metrics: IngressMetrics;
  /** The metrics of all ingress processes together, when there are several. */
  clusterMetrics?: () => Promise<string>;
  log: Logger;
}

/** The ingress as an Express app, built from its dependencies; tests drive it without a port. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(helmet());

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await Promise.race([
        deps.redis.ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
      ]);
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ status: 'unavailable', reason: 'Redis is not reachable' });
    }
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', deps.metrics.registry.contentType);
    // Under INGRESS_WORKERS the primary adds up every ingress process's metrics.
    res.send(await (deps.clusterMetrics ?? (() => deps.metrics.registry.metrics()))());
  });

  // Written from the schemas the routes validate with, so it cannot drift from them; on the
  // first request rather than at start-up, which it would slow for every process.
  let openApi: string | undefined;
  app.get('/openapi.json', (_req, res) => {
    openApi ??= JSON.stringify(openApiDocument());
    res.type('application/json').send(openApi);
  });

  app.use(webhookRoutes(deps));

  app.use((_req, res) => {
    sendError(res, new RequestRejectedError('not_found', 'No such endpoint'));
  });
  // Nothing answers 500: an unexpected error leaves the event unconfirmed, and the sender's
  // retry is safe (a repeat of one that got in is answered with its first acknowledgement).
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    deps.log.error({ err: error }, 'unexpected error in the ingress');
    if (res.headersSent) return;
    sendError(
      res,
      new RequestRejectedError('unavailable', 'The webhook could not be confirmed; retry it'),
    );
  });
  return app;
}
