import express from 'express';
import { z } from 'zod';
import { DEFAULT_ACTIONS_CONFIG, effectiveRules } from '@pw/shared/actions';
import { EVENT_TYPES } from '@pw/shared/events';
import { routingRulesSchema, selectActions } from '@pw/shared/rules';
import type { ActionsConfig } from '@pw/shared/actions';
import type { AuditLog } from '@pw/shared/records';
import type { RoutingRule, RulesStore } from '@pw/shared/rules';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';

export interface RulesApiDeps {
  rules: Pick<RulesStore, 'read' | 'replace'>;
  /** `ACTIONS_CONFIG`: an action it disables is left out of a preview, as the ingress leaves it out. */
  actionsConfig?: ActionsConfig;
  audit: Pick<AuditLog, 'record'>;
}

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
 * The routing rules, mounted at `/api/rules` behind the operator API's body parsing: read them,
 * replace them whole (audited), and preview the actions an event would set off.
 */
export function rulesApi(deps: RulesApiDeps): express.Router {
  const api = express.Router();

  api.get('/', async (_req, res) => {
    res.json(await deps.rules.read());
  });

  api.put('/', async (req, res) => {
    const body = req.body as unknown;
    const candidate = Array.isArray(body) ? body : (body as { rules?: unknown } | undefined)?.rules;
    const rules = parseRules(res, candidate);
    if (!rules) return;
    const stored = await deps.rules.replace(rules, String(res.locals.user));
    await deps.audit.record(
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

  api.post('/preview', async (req, res) => {
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

  return api;
}
