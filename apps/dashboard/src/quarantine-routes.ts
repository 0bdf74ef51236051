import express from 'express';
import { z } from 'zod';
import { validationProblems } from '@pw/shared/events';
import type { AuditLog } from '@pw/shared/records';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';
import { newBulkRelease } from './quarantine.js';
import type { Quarantine } from './quarantine.js';
import { isoTime, refuse } from './records-api.js';
import { webhookIdParam } from './webhook-id.js';

export interface QuarantineApiDeps {
  /** Absent without a record store: the routes answer 503 `store_unavailable`. */
  quarantine?:
    Pick<Quarantine, 'event' | 'release' | 'discard' | 'preview' | 'releaseAll'> | undefined;
  audit: Pick<AuditLog, 'record'>;
}

/** A bulk release's filter and `dry_run`, from its query string and JSON body together. */
const bulkSchema = z.strictObject({
  event_type: z.string().min(1).max(100).optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
  dry_run: z.union([z.enum(['true', 'false']), z.boolean()]).optional(),
});

/** A discard's body: why, as the audit log keeps it. */
const discardSchema = z.strictObject(
  {
    reason: z
      .string({ error: 'is required: why the event is discarded' })
      .trim()
      .min(1, 'is required: why the event is discarded')
      .max(500),
  },
  { error: 'must be a JSON object with a reason' },
);

const { stillInvalid, notQuarantined, invalidRequest, storeUnavailable } = DASHBOARD_ERROR_CODES;

type Desk = NonNullable<QuarantineApiDeps['quarantine']>;
type Audit = QuarantineApiDeps['audit'];

const userOf = (res: express.Response) => String(res.locals.user);

/**
 * The quarantine's routes, mounted at `/api/quarantine` beside its list (records-api.ts): one
 * webhook's kept event, release one, release many (`dry_run` first), discard one with a reason.
 * Each release and discard is audited.
 */
export function quarantineApi(deps: QuarantineApiDeps): express.Router {
  const api = express.Router();
  api.param('webhookId', webhookIdParam);
  api.use((_req, res, next) => {
    if (deps.quarantine) return next();
    sendError(res, 503, storeUnavailable, 'No record store: DATABASE_URL is unset');
  });
  const desk = deps.quarantine!;
  // The list is search's (records-api.ts); one webhook's kept event is read here.
  api.get('/:webhookId', async (req, res) => {
    res.json(await desk.event(req.params.webhookId));
  });
  api.post('/release', releaseMany(desk, deps.audit));
  api.post('/:webhookId/release', releaseOne(desk, deps.audit));
  api.post('/:webhookId/discard', discardOne(desk, deps.audit));
  return api;
}

/** The audit entry of one release, made by `user`. */
const released = (
  user: string,
  webhookId: string,
  actions: readonly string[],
  bulk?: true,
): Parameters<Audit['record']> => [
  {
    user,
    action: 'quarantine_release',
    target: webhookId,
    details: { actions_triggered: actions, ...(bulk && { bulk }) },
  },
  'quarantined webhook released',
];

/** `POST /release?<filters>`: a dry run (200), or every release (202), each audited. */
function releaseMany(desk: Desk, audit: Audit): express.RequestHandler {
  return async (req, res) => {
    const parsed = bulkSchema.safeParse({ ...req.query, ...(req.body as object | undefined) });
    if (!parsed.success) return refuse(res, parsed.error);
    const { dry_run: dryRun, ...filter } = parsed.data;
    if (dryRun === 'true' || dryRun === true) return res.json(await desk.preview(filter));
    const bulk = newBulkRelease();
    let finished = false;
    try {
      // Each release is audited as it is made, as one release is: the webhook's own entry.
      await desk.releaseAll(
        filter,
        (result) =>
          audit.record(...released(userOf(res), result.webhook_id, result.actions_triggered, true)),
        bulk,
      );
      finished = true;
    } finally {
      // Counted even when it stopped part way: what was released stays released.
      const { released: count, still_invalid: invalid, not_quarantined: gone } = bulk;
      await audit.record(
        {
          user: userOf(res),
          action: 'quarantine_bulk_release',
          target: 'quarantine',
          details: {
            filter,
            released: count,
            still_invalid: invalid,
            not_quarantined: gone,
            ...(finished ? {} : { stopped: true }),
          },
        },
        finished ? 'bulk release of quarantined webhooks' : 'bulk release stopped part way',
      );
    }
    res.status(202).json(bulk);
  };
}

/** `POST /:webhookId/release`: 202 with its actions, or 409 (still invalid, or not quarantined). */
function releaseOne(desk: Desk, audit: Audit): express.RequestHandler<{ webhookId: string }> {
  return async (req, res) => {
    const webhookId = req.params.webhookId;
    const result = await desk.release(webhookId);
    if (result.outcome === 'still_invalid') {
      return sendError(
        res,
        409,
        stillInvalid,
        `The event of ${webhookId} still fails the running code's schema; nothing was released`,
        result.problems,
      );
    }
    if (result.outcome === 'not_quarantined') {
      return sendError(res, 409, notQuarantined, `Webhook ${webhookId} was released or discarded`);
    }
    await audit.record(...released(userOf(res), webhookId, result.actions_triggered));
    res.status(202).json({ webhook_id: webhookId, actions_triggered: result.actions_triggered });
  };
}

/** `POST /:webhookId/discard` with `{ reason }`: 200, 400 without a reason, 409 when not kept. */
function discardOne(desk: Desk, audit: Audit): express.RequestHandler<{ webhookId: string }> {
  return async (req, res) => {
    const webhookId = req.params.webhookId;
    const parsed = discardSchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      const details = validationProblems(parsed.error);
      return sendError(res, 400, invalidRequest, 'A discard needs a reason', details);
    }
    if (!(await desk.discard(webhookId))) {
      return sendError(res, 409, notQuarantined, `Webhook ${webhookId} was released or discarded`);
    }
    await audit.record(
      {
        user: userOf(res),
        action: 'quarantine_discard',
        target: webhookId,
        details: { reason: parsed.data.reason },
      },
      'quarantined webhook discarded',
    );
    res.json({ webhook_id: webhookId, state: 'discarded' });
  };
}
