import express from 'express';
import type { AuditLog } from '@pw/shared/records';
import type { Logger } from '@pw/shared/runtime';
import { circuitApi } from './circuit-routes.js';
import { deadLetterApi } from './dead-letter-routes.js';
import type { CircuitApiDeps } from './circuit-routes.js';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';
import { jsonBodiesOnly } from './json-bodies-only.js';
import type { Operator } from './operator.js';
import { quarantineApi } from './quarantine-routes.js';
import type { QuarantineApiDeps } from './quarantine-routes.js';
import { recordsApi } from './records-api.js';
import { rejectedChangeApi } from './rejected-change-routes.js';
import type { RejectedChangeApiDeps } from './rejected-change-routes.js';
import type { RecordReader } from './records-api.js';
import { rulesApi } from './rules-routes.js';
import type { RulesApiDeps } from './rules-routes.js';
import type { Trends } from './trends.js';
import type { SenderClock } from '@pw/shared/intake';
import { webhookIdParam } from './webhook-id.js';

export interface OperatorApiDeps
  extends CircuitApiDeps, RulesApiDeps, RejectedChangeApiDeps, QuarantineApiDeps {
  operator: Operator;
  trends: () => Promise<Trends>;
  /** Each sender's clock as the ingress processes estimate it. */
  senderClocks: () => Promise<SenderClock[]>;
  /** The record store, when `DATABASE_URL` is set. */
  records?: RecordReader;
  audit: Pick<AuditLog, 'record'>;
  log: Logger;
}

const { notFound } = DASHBOARD_ERROR_CODES;

/**
 * The operator API (mounted at `/api`): outcomes and replays here; dead letters, routing rules,
 * circuits and the record store's reads in routers of their own. Every change is logged with
 * `audit: true` and the user who made it.
 */
export function operatorApi(deps: OperatorApiDeps): express.Router {
  const { operator, audit } = deps;
  const api = express.Router();
  api.use(jsonBodiesOnly());
  api.use(express.json({ limit: '1mb' }));
  api.param('webhookId', webhookIdParam);

  api.get('/webhooks/:webhookId', async (req, res) => {
    const outcome = await operator.outcome(req.params.webhookId);
    if (!outcome) return sendError(res, 404, notFound, `No webhook ${req.params.webhookId}`);
    res.json(outcome);
  });

  api.post('/webhooks/:webhookId/replay', async (req, res) => {
    const replayed = await operator.replayWebhook(req.params.webhookId);
    if (!replayed) return sendError(res, 404, notFound, `No webhook ${req.params.webhookId}`);
    await audit.record(
      {
        user: String(res.locals.user),
        action: 'replay',
        target: req.params.webhookId,
        details: { actions: replayed },
      },
      'replay',
    );
    res.status(202).json({ webhook_id: req.params.webhookId, replayed });
  });

  api.use('/dead-letters', deadLetterApi(deps));

  api.use('/rules', rulesApi(deps));

  api.get('/trends', async (_req, res) => {
    res.json(await deps.trends());
  });

  // How far each sender's clock runs from the receiver's: events are ordered on it.
  api.get('/sender-clocks', async (_req, res) => {
    res.json({ senders: await deps.senderClocks() });
  });

  api.use('/circuits', circuitApi(deps));
  api.use('/record-changes/rejected', rejectedChangeApi(deps));
  api.use('/quarantine', quarantineApi(deps));
  api.use(recordsApi(deps.records));

  return api;
}
