import express from 'express';
import { z } from 'zod';
import { INVALID_CURSOR, INVALID_TIME } from '@pw/records';
import type { RecordStore } from '@pw/records';
import { identifier, PwError } from '@pw/shared';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';

/** What the operator API reads from the record store (contract section 12). */
export type RecordReader = Pick<RecordStore, 'search' | 'audit' | 'ledger' | 'webhook'>;

/** An ISO 8601 time with its offset, in the years PostgreSQL and JavaScript both hold. */
export const isoTime = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 time' })
  .refine((value) => /^(?!0000)\d{4}-/.test(value), 'must be a year from 0001 on');

export const searchSchema = z.strictObject({
  // Each matches an identifier exactly: anything an event may carry as one can be searched for.
  q: z.string().trim().pipe(identifier).optional(),
  entity_id: identifier.optional(),
  customer_id: identifier.optional(),
  event_type: z.string().min(1).max(100).optional(),
  state: z.enum(['queued', 'processing', 'completed', 'failed']).optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(500).optional(),
});

const auditSchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(500).optional(),
});

const ledgerSchema = z.strictObject({ from: isoTime, to: isoTime });

/** A query's problems, at their paths, as a 400 `invalid_query`. */
export function refuse(res: express.Response, error: z.ZodError) {
  return sendError(
    res,
    400,
    DASHBOARD_ERROR_CODES.invalidQuery,
    'The query was refused',
    error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
  );
}

/** The record store's refusal of a cursor it did not give. */
const isCursorError = (error: unknown) =>
  error instanceof PwError && (error.code === INVALID_CURSOR || error.code === INVALID_TIME);

/** An answer read from the store; a cursor (or time) it refuses is the query's fault: 400. */
async function answerPage(res: express.Response, read: () => Promise<unknown>): Promise<void> {
  try {
    res.json(await read());
  } catch (error) {
    if (!isCursorError(error)) throw error;
    const field = (error as PwError).code === INVALID_TIME ? 'to' : 'cursor';
    sendError(res, 400, DASHBOARD_ERROR_CODES.invalidQuery, (error as PwError).message, [
      { path: field, message: (error as PwError).message },
    ]);
  }
}

/**
 * The record store's routes: search, the audit log, the ledger. Without a store configured
 * (`DATABASE_URL` unset outside production) they answer 503 `store_unavailable`.
 */
export function recordsApi(records: RecordReader | undefined): express.Router {
  const api = express.Router();
  const needStore: express.RequestHandler = (_req, res, next) => {
    if (records) return next();
    sendError(
      res,
      503,
      DASHBOARD_ERROR_CODES.storeUnavailable,
      'No record store: DATABASE_URL is unset',
    );
  };
  api.use(['/webhooks', '/audit', '/ledger'], needStore);
  const store = records as RecordReader;

  api.get('/webhooks', async (req, res) => {
    const parsed = searchSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    await answerPage(res, () => store.search(parsed.data));
  });

  api.get('/audit', async (req, res) => {
    const parsed = auditSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    await answerPage(res, () => store.audit(parsed.data));
  });

  api.get('/ledger', async (req, res) => {
    const parsed = ledgerSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    await answerPage(res, () => store.ledger(parsed.data));
  });
  return api;
}
