import express from 'express';
import { z } from 'zod';
import type { AuditLog } from '@pw/shared/records';
import { DEAD_LETTER_LIMIT, decodeCursor } from './dead-letters.js';
import type { DeadLetterFilter } from './dead-letters.js';
import type { Operator } from './operator.js';
import { isoTime, refuse } from './records-api.js';

export interface DeadLetterApiDeps {
  operator: Pick<Operator, 'deadLetters' | 'dryRun' | 'replayDeadLetters'>;
  audit: Pick<AuditLog, 'record'>;
}

const filterSchema = z.object({
  action: z.string().max(100).optional(),
  event_type: z.string().max(100).optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
});

/** A bulk replay's filter, from its query string and JSON body together. */
const replaySchema = filterSchema.extend({
  dry_run: z.union([z.enum(['true', 'false']), z.boolean()]).optional(),
});

/** A page of the list: the filter, `limit` and the `cursor` of the page before. */
const pageSchema = filterSchema.extend({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(DEAD_LETTER_LIMIT.max)
    .default(DEAD_LETTER_LIMIT.default),
  cursor: z
    .string()
    .max(500)
    .transform((cursor, ctx) => {
      const position = decodeCursor(cursor);
      if (position) return position;
      ctx.addIssue({ code: 'custom', message: 'must be a next_cursor this API gave' });
      return z.NEVER;
    })
    .optional(),
});

/** The filter with its times as dates. */
const toFilter = ({ from, to, ...rest }: z.output<typeof filterSchema>): DeadLetterFilter => ({
  ...rest,
  ...(from ? { from: new Date(from) } : {}),
  ...(to ? { to: new Date(to) } : {}),
});

/**
 * The dead letters, mounted at `/api/dead-letters` behind the operator API's body parsing: the
 * list a page at a time, and the bulk replay (with `dry_run`, a count and the first 100).
 */
export function deadLetterApi(deps: DeadLetterApiDeps): express.Router {
  const { operator, audit } = deps;
  const api = express.Router();

  api.get('/', async (req, res) => {
    const parsed = pageSchema.safeParse(req.query);
    if (!parsed.success) return refuse(res, parsed.error);
    const { limit, cursor, ...filter } = parsed.data;
    res.json(await operator.deadLetters(toFilter(filter), { limit, ...(cursor && { cursor }) }));
  });

  api.post('/replay', async (req, res) => {
    const parsed = replaySchema.safeParse({ ...req.query, ...(req.body as object | undefined) });
    if (!parsed.success) return refuse(res, parsed.error);
    const { dry_run: dryRun, ...rest } = parsed.data;
    const filter = toFilter(rest);
    if (dryRun === 'true' || dryRun === true) return res.json(await operator.dryRun(filter));
    const replayed = await operator.replayDeadLetters(filter);
    await audit.record(
      {
        user: String(res.locals.user),
        action: 'bulk_replay',
        target: 'dead-letters',
        details: { filter, replayed: replayed.length },
      },
      'bulk replay of dead letters',
    );
    res.status(202).json({ replayed });
  });

  return api;
}
