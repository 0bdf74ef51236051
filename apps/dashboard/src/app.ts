import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import express from 'express';
import helmet from 'helmet';
import type { NextFunction, Request, Response } from 'express';
import type { Queue } from 'bullmq';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { routingRulesSchema } from '@pw/shared';
import type { Logger, RulesStore } from '@pw/shared';
import { apiDocs } from './api-docs.js';
import { basicAuth } from './basic-auth.js';
import type { Operator } from './operator.js';

export interface DashboardDeps {
  queues: readonly Queue[];
  operator: Operator;
  rules: Pick<RulesStore, 'read' | 'replace'>;
  metrics: Registry;
  log: Logger;
  credentials: { user: string; password: string };
}

const filterSchema = z.object({ action: z.string().optional(), event_type: z.string().optional() });

const error = (
  res: Response,
  status: number,
  code: string,
  message: string,
  details: unknown[] = [],
) => res.status(status).json({ error: { code, message, details } });

/** The dashboard: bull-board at `/admin/queues` and the operator API, behind basic auth. */
export function createDashboard(deps: DashboardDeps): express.Express {
  const { operator, log } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', deps.metrics.contentType);
    res.send(await deps.metrics.metrics());
  });

  app.use(basicAuth(deps.credentials.user, deps.credentials.password));

  const board = new ExpressAdapter();
  board.setBasePath('/admin/queues');
  createBullBoard({
    queues: deps.queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: false })),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'partner-webhooks' } },
  });
  app.use('/admin/queues', board.getRouter() as express.Router);
  app.use('/docs', apiDocs());

  const api = express.Router();
  api.use(express.json({ limit: '1mb' }));

  api.get('/webhooks/:webhookId', async (req, res) => {
    const outcome = await operator.outcome(req.params.webhookId);
    if (!outcome) return void error(res, 404, 'not_found', `No webhook ${req.params.webhookId}`);
    res.json(outcome);
  });

  api.post('/webhooks/:webhookId/replay', async (req, res) => {
    const replayed = await operator.replayWebhook(req.params.webhookId);
    if (!replayed) return void error(res, 404, 'not_found', `No webhook ${req.params.webhookId}`);
    log.info(
      { webhook_id: req.params.webhookId, actions: replayed, user: res.locals.user },
      'replay',
    );
    res.status(202).json({ webhook_id: req.params.webhookId, replayed });
  });

  api.get('/dead-letters', async (req, res) => {
    res.json({ dead_letters: await operator.deadLetters(filterSchema.parse(req.query)) });
  });

  api.post('/dead-letters/replay', async (req, res) => {
    const filter = filterSchema.parse({ ...req.query, ...(req.body as object | undefined) });
    const replayed = await operator.replayDeadLetters(filter);
    log.info(
      { filter, replayed: replayed.length, user: res.locals.user },
      'bulk replay of dead letters',
    );
    res.status(202).json({ replayed });
  });

  api.get('/rules', async (_req, res) => {
    res.json(await deps.rules.read());
  });

  api.put('/rules', async (req, res) => {
    const body = req.body as unknown;
    const candidate = Array.isArray(body) ? body : (body as { rules?: unknown } | undefined)?.rules;
    const parsed = routingRulesSchema.safeParse(candidate);
    if (!parsed.success) {
      const details = parsed.error.issues.map((issue) => ({
        path: issue.path.join('.'),
        message: issue.message,
      }));
      return void error(
        res,
        400,
        'invalid_rules',
        'The rules were refused whole; nothing changed',
        details,
      );
    }
    const stored = await deps.rules.replace(parsed.data, String(res.locals.user));
    log.info({ user: res.locals.user, rules: parsed.data.length }, 'routing rules replaced');
    res.json(stored);
  });

  app.use('/api', api);
  app.use((_req, res) => void error(res, 404, 'not_found', 'No such page'));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: number }).status;
    if (status && status < 500)
      return void error(res, status, 'bad_request', (err as Error).message);
    log.error({ err }, 'unexpected error in the dashboard');
    error(res, 500, 'internal_error', 'Internal error');
  });
  return app;
}
