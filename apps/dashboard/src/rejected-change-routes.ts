import express from 'express';
import { z } from 'zod';
import { isStreamId } from '@pw/records';
import type { RejectedChanges } from '@pw/records';
import type { AuditLog } from '@pw/shared/records';
import { refuse } from './records-api.js';

export interface RejectedChangeApiDeps {
  /** Record changes the record store refused, set aside by the recorder. */
  rejected: Pick<RejectedChanges, 'list' | 'redrive' | 'discard'>;
  audit: Pick<AuditLog, 'record'>;
}

const streamId = z.string().refine(isStreamId, 'must be an id this API listed');

const pageSchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: streamId.optional(),
});

/** Which to re-drive: the ids listed, or every one when none is given. */
const redriveSchema = z.strictObject({ ids: z.array(streamId).min(1).max(500).optional() });

/** Which to drop for good, and why (kept in the audit log). */
const discardSchema = z.strictObject({
  ids: z.array(streamId).min(1).max(500),
  reason: z.string().trim().min(1).max(500),
});

/**
 * The record changes the store refused, mounted at `/api/record-changes/rejected` behind the
 * operator API's body parsing: the list a page at a time (newest first), the re-drive after a fix
 * (named ones, or all), and the discard of ones that can never be stored. Both changes are
 * audited. See docs/records.md, "A change the store refuses".
 */
export function rejectedChangeApi(deps: RejectedChangeApiDeps): express.Router {
  const { rejected, audit } = deps;
  const api = express.Router();

  api.get('/', async (req, res) => {
    const parsed = pageSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    res.json(await rejected.list(parsed.data));
  });

  api.post('/redrive', async (req, res) => {
    const parsed = redriveSchema.safeParse(req.body ?? {});
    if (!parsed.success) return refuse(res, parsed.error);
    const redriven = await rejected.redrive(parsed.data.ids);
    await audit.record(
      {
        user: String(res.locals.user),
        action: 'record_changes_redrive',
        target: 'record-changes',
        details: { ids: redriven, all: parsed.data.ids === undefined },
      },
      'rejected record changes re-driven',
    );
    res.status(202).json({ redriven });
  });

  api.post('/discard', async (req, res) => {
    const parsed = discardSchema.safeParse(req.body ?? {});
    if (!parsed.success) return refuse(res, parsed.error);
    const discarded = await rejected.discard(parsed.data.ids);
    await audit.record(
      {
        user: String(res.locals.user),
        action: 'record_changes_discard',
        target: 'record-changes',
        details: { ids: discarded, reason: parsed.data.reason },
      },
      'rejected record changes discarded',
    );
    res.json({ discarded });
  });

  return api;
}
