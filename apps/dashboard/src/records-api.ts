import express from 'express';
import { z } from 'zod';
import type { RecordStore } from '@pw/records';
import { identifier, validationProblems } from '@pw/shared/events';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';
import { fromRecordStore } from './record-store-errors.js';

/** What the operator API reads from the record store (see docs/records.md). */
export type RecordReader = Pick<
  RecordStore,
  | 'search'
  | 'audit'
  | 'ledger'
  | 'webhook'
  | 'quarantined'
  | 'quarantineSummaries'
  | 'quarantinedEvents'
  | 'newestEventTime'
>;

/** The first and the last instant PostgreSQL's `timestamptz` and an ISO 8601 year both hold. */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00Z');
const END_INSTANT = Date.UTC(10_000, 0, 1);

/**
 * An ISO 8601 time with its offset (zod checks that its date exists), whose instant, its offset
 * applied, falls in the years 0001 to 9999: PostgreSQL refuses year 0, and `Date.toISOString()`
 * writes a later year as `+010000-…`, which PostgreSQL does not read.
 */
export const isoTime = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 time' })
  .refine((value) => /^(?!0000)\d{4}-/.test(value), 'must be a year from 0001 on')
  .refine((value) => {
    const instant = Date.parse(value);
    return instant >= FIRST_INSTANT && instant < END_INSTANT;
  }, 'must fall in the years 0001 to 9999 (UTC)');

/** A string PostgreSQL can hold in `text`: anything but NUL. */
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL');

export const searchSchema = z.strictObject({
  // Each matches an identifier exactly: anything an event may carry as one can be searched for
  // (1-256 characters, no control characters, so no NUL either).
  q: z.string().trim().pipe(identifier).optional(),
  entity_id: identifier.optional(),
  customer_id: identifier.optional(),
  event_type: text(100).optional(),
  state: z
    .enum(['queued', 'processing', 'completed', 'failed', 'quarantined', 'discarded'])
    .optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(500).optional(),
});

const quarantineSchema = searchSchema.pick({
  event_type: true,
  from: true,
  to: true,
  limit: true,
  cursor: true,
});

const auditSchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(500).optional(),
});

/** The last `to` whose widening to a whole minute stays in year 9999. */
const LAST_LEDGER_TO = Date.parse('9999-12-31T23:59:00Z');

const ledgerSchema = z.strictObject({
  from: isoTime,
  to: isoTime.refine(
    (value) => Date.parse(value) <= LAST_LEDGER_TO,
    'must be 9999-12-31T23:59:00Z or earlier: the ledger widens it to a whole minute',
  ),
});

/** A query's problems, at their paths, as a 400 `invalid_query`. */
export function refuse(res: express.Response, error: z.ZodError) {
  return sendError(
    res,
    400,
    DASHBOARD_ERROR_CODES.invalidQuery,
    'The query was refused',
    validationProblems(error),
  );
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
  api.use(['/webhooks', '/audit', '/ledger', '/quarantine'], needStore);
  const store = records as RecordReader;

  api.get('/webhooks', async (req, res) => {
    const parsed = searchSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    res.json(await fromRecordStore(() => store.search(parsed.data)));
  });

  api.get('/quarantine', async (req, res) => {
    const parsed = quarantineSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    res.json(await fromRecordStore(() => store.quarantined(parsed.data)));
  });

  api.get('/audit', async (req, res) => {
    const parsed = auditSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    res.json(await fromRecordStore(() => store.audit(parsed.data)));
  });

  api.get('/ledger', async (req, res) => {
    const parsed = ledgerSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    res.json(await fromRecordStore(() => store.ledger(parsed.data)));
  });
  return api;
}
