import type { z } from 'zod';
import type { Problem } from './problem.js';
import type { EventDefinition } from './registry.js';

/** A schema's refusal as the problems an answer lists: the field's path (`a.b`) and why. */
export const validationProblems = (error: z.ZodError): Problem[] =>
  error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));

/**
 * A kept (quarantined) event judged again by the running code's schema, for its release: its
 * entity id when it passes now, else its problems now. The event is kept without `signature`,
 * which was verified when it arrived: the schema is given an empty one, as with signatures off.
 */
export function recheckEvent(
  definition: EventDefinition,
  event: Record<string, unknown>,
): { entityId: string } | { problems: Problem[] } {
  const checked = definition.schema.safeParse({ ...event, signature: '' });
  if (!checked.success) return { problems: validationProblems(checked.error) };
  return { entityId: String(checked.data[definition.entityIdField]) };
}
