import { z } from 'zod';
import { ACTION_NAMES } from '../actions/action-table.js';
import type { Problem } from './problem.js';

/** A `Problem` as the answers list it. */
const problemSchema = z.object({
  path: z.string(),
  message: z.string(),
}) satisfies z.ZodType<Problem>;

/**
 * The body of a 200 answer, the same for the first delivery and every duplicate of it; and of a
 * 202, for an authentic event that failed its schema, kept and quarantined (`quarantined`, and
 * its `problems`; no action set off).
 */
export const acknowledgementSchema = z.object({
  received: z.literal(true),
  processed_at: z.iso.datetime(),
  webhook_id: z.string().regex(/^wh_[A-Za-z0-9_-]{20,}$/),
  actions_triggered: z.array(z.enum(ACTION_NAMES)),
  quarantined: z.literal(true).optional(),
  /** A repeat of a quarantined event an operator has discarded since (this project's addition). */
  discarded: z.literal(true).optional(),
  problems: z.array(problemSchema).optional(),
});
export type Acknowledgement = z.infer<typeof acknowledgementSchema>;

/** The body of every refusal. */
export const errorBodySchema = z.object({
  received: z.literal(false),
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.array(problemSchema),
  }),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;
