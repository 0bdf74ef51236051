import express from 'express';
import helmet from 'helmet';
import type { NextFunction, Request, Response } from 'express';
import type { Queue } from 'bullmq';
import type { Registry } from 'prom-client';
import type { RejectedChanges } from '@pw/records';
import type { ActionsConfig } from '@pw/shared/actions';
import type { CircuitBoard } from '@pw/shared/circuits';
import type { AuditLog } from '@pw/shared/records';
import type { RulesStore } from '@pw/shared/rules';
import type { Logger } from '@pw/shared/runtime';
import type { ActionQueues } from '@pw/shared/queue';
import { apiDocs } from './api-docs.js';
import { basicAuth } from './basic-auth.js';
import { consoleAssets } from './console-assets.js';
import type { LoginLimit } from './login-limit.js';
import {
  DASHBOARD_ERROR_CODES,
  DashboardError,
  sendDashboardError,
  sendError,
} from './error-response.js';
import { noStore } from './no-store.js';
import type { Operator } from './operator.js';
import type { Quarantine } from './quarantine.js';
import { sameOrigin } from './same-origin.js';
import { operatorApi } from './operator-routes.js';
import { queueBoard } from './queue-board.js';
import type { RecordReader } from './records-api.js';
import type { Trends } from './trends.js';
import type { SenderClock } from '@pw/shared/intake';

export interface DashboardDeps {
  /** The board's queues: every partition's `actions` queue, in partition order. */
  queues: readonly Queue[];
  operator: Operator;
  rules: Pick<RulesStore, 'read' | 'replace'>;
  /** The partner targets' circuits, shared with the workers through Redis. */
  circuits: CircuitBoard;
  /** The `actions` queues, where closing a circuit wakes the jobs it held. */
  actions: ActionQueues;
  metrics: Registry;
  log: Logger;
  /** Every operator change: a log line and an entry in the record store's audit log. */
  audit: Pick<AuditLog, 'record'>;
  /** Record changes the store refused, set aside by the recorder. */
  rejected: Pick<RejectedChanges, 'list' | 'redrive' | 'discard'>;
  /** The console's per-minute trends (`trends.ts`). */
  trends: () => Promise<Trends>;
  /** Each sender's clock as the ingress processes estimate it (`readSenderClocks`). */
  senderClocks: () => Promise<SenderClock[]>;
  /** `ACTIONS_CONFIG`, whose disabled actions a rules preview leaves out. */
  actionsConfig?: ActionsConfig;
  /** The record store (search, audit log, ledger), when `DATABASE_URL` is set. */
  records?: RecordReader;
  /** Release and discard of quarantined webhooks; there is none without a record store. */
  quarantine?: Quarantine | undefined;
  credentials: { user: string; password: string };
  /** The operator console's bundle (`build-console.ts`), served at `/`. */
  consoleDir?: string;
  /** The dashboard's address as browsers see it, when a proxy stands in front (its origin counts). */
  publicUrl?: string;
  /** Failed logins per client address (`login-limit.ts`). */
  logins: LoginLimit;
  /**
   * Proxies in front whose `X-Forwarded-*` headers are believed (Express's `trust proxy` hop
   * count): the client address the login limit counts is then the one they name. @defaultValue 0:
   * the connection's address
   */
  trustProxyHops?: number;
}

const { notFound } = DASHBOARD_ERROR_CODES;

/** The dashboard: bull-board at `/admin/queues` and the operator API, behind basic auth. */
export function createDashboard(deps: DashboardDeps): express.Express {
  const { log } = deps;
  const app = express();
  app.disable('x-powered-by');
  if (deps.trustProxyHops) app.set('trust proxy', deps.trustProxyHops);
  app.use(helmet());
  // First of all, before basic auth: a cross-site request is refused whatever its route and
  // credentials, and the 403 depends on nothing else, so it reveals nothing (not even whether the
  // route exists) and never prompts a browser for a password on a foreign page's behalf.
  app.use(sameOrigin(deps.publicUrl));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', deps.metrics.contentType);
    res.send(await deps.metrics.metrics());
  });

  app.use(noStore());
  app.use(basicAuth(deps.credentials.user, deps.credentials.password, { limit: deps.logins, log }));

  app.use('/admin/queues', ...queueBoard(deps.queues, deps.log, deps.audit));
  app.use('/docs', apiDocs());

  app.use('/api', operatorApi(deps));
  if (deps.consoleDir) app.use(consoleAssets(deps.consoleDir));
  app.use((_req, res) => sendError(res, 404, notFound, 'No such page'));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof DashboardError) {
      if (err.code === DASHBOARD_ERROR_CODES.storeUnavailable) {
        log.warn({ err: err.cause, path: req.path }, 'record store unavailable');
      }
      return sendDashboardError(res, err);
    }
    const status = (err as { status?: number }).status;
    if (status && status < 500) {
      const code =
        status === 415
          ? DASHBOARD_ERROR_CODES.unsupportedMediaType
          : DASHBOARD_ERROR_CODES.badRequest;
      return sendError(res, status, code, (err as Error).message);
    }
    log.error({ err }, 'unexpected error in the dashboard');
    sendError(res, 500, DASHBOARD_ERROR_CODES.internalError, 'Internal error');
  });
  return app;
}
