import express from 'express';
import { z } from 'zod';
import {
  DEFAULT_ACTIONS_CONFIG,
  effectiveRules,
  EVENT_TYPES,
  routingRulesSchema,
  selectActions,
} from '@pw/shared';
import type { ActionsConfig, AuditLog, Logger, RoutingRule, RulesStore } from '@pw/shared';
import { circuitApi } from './circuit-routes.js';
import { deadLetterApi } from './dead-letter-routes.js';
import type { CircuitApiDeps } from './circuit-routes.js';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';
import { jsonBodiesOnly } from './json-bodies-only.js';
import type { Operator } from './operator.js';
import { recordsApi } from './records-api.js';
import type { RecordReader } from './records-api.js';
import type { Trends } from './trends.js';
import { webhookIdParam } from './webhook-id.js';

export interface OperatorApiDeps extends CircuitApiDeps {
  operator: Operator;
  trends: () => Promise<Trends>;
  /** `ACTIONS_CONFIG`: an action it disables is left out of a preview, as the ingress leaves it out. */
  actionsConfig?: ActionsConfig;
  rules: Pick<RulesStore, 'read' | 'replace'>;
  /** The record store, when `DATABASE_URL` is set. */
  records?: RecordReader;
  audit: Pick<AuditLog, 'record'>;
  log: Logger;
}

const { notFound } = DASHBOARD_ERROR_CODES;

/** An event to preview the rules on: any object, as long as its event type is one of ours. */
const previewEventSchema = z.looseObject({ event_type: z.enum(EVENT_TYPES) });

/**
 * Routing rules, or undefined after answering 400 `invalid_rules` with each problem at its path
 * in the rules (`0.action`): a rules change is refused whole, and a preview of bad rules too.
 */
function parseRules(res: express.Response, candidate: unknown): RoutingRule[] | undefined {
  const parsed = routingRulesSchema.safeParse(candidate);
  if (parsed.success) return parsed.data;
  sendError(
    res,
    400,
    DASHBOARD_ERROR_CODES.invalidRules,
    'The rules were refused whole; nothing changed',
    parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
  );
  return undefined;
}

/**
 * The operator API (mounted at `/api`): outcomes, replays, dead letters, routing rules, circuits
 * (their own router). Every change is logged with `audit: true` and the user who made it. Long
 * because it is a table of routes, each a few lines read top to bottom.
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

  api.get('/rules', async (_req, res) => {
    res.json(await deps.rules.read());
  });

  api.put('/rules', async (req, res) => {
    const body = req.body as unknown;
    const candidate = Array.isArray(body) ? body : (body as { rules?: unknown } | undefined)?.rules;
    const rules = parseRules(res, candidate);
    if (!rules) return;
    const stored = await deps.rules.replace(rules, String(res.locals.user));
    await audit.record(
      {
        user: String(res.locals.user),
        action: 'rules_replaced',
        target: 'rules',
        details: { rules },
      },
      'routing rules replaced',
    );
    res.json(stored);
  });

  api.post('/rules/preview', async (req, res) => {
    const body = (req.body ?? {}) as { rules?: unknown; event?: unknown };
    const rules =
      body.rules === undefined ? (await deps.rules.read()).rules : parseRules(res, body.rules);
    if (!rules) return;
    const event = previewEventSchema.safeParse(body.event);
    if (!event.success) {
      return sendError(
        res,
        400,
        DASHBOARD_ERROR_CODES.invalidEvent,
        'The event must be an object with a known event_type',
        event.error.issues.map((issue) => ({
          path: issue.path.join('.'),
          message: issue.message,
        })),
      );
    }
    const inForce = effectiveRules({ ...(deps.actionsConfig ?? DEFAULT_ACTIONS_CONFIG), rules });
    res.json({ actions: selectActions(event.data.event_type, event.data, inForce) });
  });

  api.get('/trends', async (_req, res) => {
    res.json(await deps.trends());
  });

  api.use('/circuits', circuitApi(deps));
  api.use(recordsApi(deps.records));

  return api;
}
