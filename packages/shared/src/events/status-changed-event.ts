import { z } from 'zod';
import { identifier, nulPath, previousStatus, signature, text, zonedDateTime } from './fields.js';

/** What sets one status event apart; the members every status event has are the factory's. */
export interface StatusChangedSpec {
  type: string;
  /** Member holding the entity's id (`quote_id`, ...). */
  entityIdField: string;
  /** Optional other names of the entity, listed right after its id (`quote_ref_code`). */
  references: z.ZodRawShape;
  /** Member holding the new status (`status` or `opportunity_status`). */
  statusField: string;
  /** The event's own members, listed after `customer_id`. */
  fields: z.ZodRawShape;
  /** The event's own `metadata` members, listed after `partner_id`. */
  metadata: z.ZodRawShape;
}

/** The members of a status event, in the order the contract lists them. */
export type StatusChangedShape<S extends StatusChangedSpec> = {
  event_type: z.ZodLiteral<S['type']>;
} & {
  [K in S['entityIdField']]: typeof identifier;
} & {
  [K in S['statusField']]: typeof text;
} & S['references'] & {
    previous_status: typeof previousStatus;
    timestamp: typeof zonedDateTime;
    customer_id: typeof identifier;
  } & S['fields'] & {
    signature: typeof signature;
    metadata: z.ZodOptional<
      z.ZodObject<{ partner_id: z.ZodOptional<typeof identifier> } & S['metadata'], z.core.$loose>
    >;
  };

/** One `*.status_changed` event: the names of its entity id and status members, and its schema. */
export interface StatusChangedEvent<S extends StatusChangedSpec> {
  type: S['type'];
  entityIdField: S['entityIdField'];
  statusField: S['statusField'];
  /** Unknown members are kept: the payload is unversioned; no string in it may hold U+0000. */
  schema: z.ZodObject<StatusChangedShape<S>, z.core.$loose>;
}

/** Builds a status event from what sets it apart: every member the events share is added here. */
export function statusChangedEvent<const S extends StatusChangedSpec>(
  spec: S,
): StatusChangedEvent<S> {
  const shape = {
    event_type: z.literal(spec.type),
    [spec.entityIdField]: identifier,
    ...spec.references,
    [spec.statusField]: text,
    previous_status: previousStatus,
    timestamp: zonedDateTime,
    customer_id: identifier,
    ...spec.fields,
    signature,
    metadata: z.looseObject({ partner_id: identifier.optional(), ...spec.metadata }).optional(),
  };
  return {
    type: spec.type,
    entityIdField: spec.entityIdField,
    statusField: spec.statusField,
    // Computed keys widen to a string index; the shape built above is the one named here.
    schema: z.looseObject(shape as StatusChangedShape<S>).check(noNul),
  };
}

/**
 * Why an event holding U+0000 fails its schema. The record store cannot hold that character (it
 * keeps U+FFFD in its place), so such an event, if kept, can never be released.
 */
export const NUL_PROBLEM = 'must not contain U+0000';

/** No string anywhere in the event, unknown members and keys included, may hold U+0000. */
const noNul = z.superRefine<Record<string, unknown>>((event, ctx) => {
  const path = nulPath(event);
  if (path) ctx.addIssue({ code: 'custom', path, message: NUL_PROBLEM, input: event });
});
