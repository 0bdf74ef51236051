import { canonicalJson, verifyEvent, withoutSignature } from '@pw/shared';
import type { EventDefinition } from '@pw/shared';
import type { z } from 'zod';
import { RequestRejected } from './error-response.js';

export interface ParseSettings {
  webhookSecrets: readonly string[];
  signatureMode: 'required' | 'off';
}

export interface ParsedWebhook {
  /** The event without `signature`, keys in the order received. */
  event: Record<string, unknown>;
  canonical: string;
  entityId: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown) =>
  Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;

function validationDetails(error: z.ZodError) {
  return error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

/**
 * The checks after the body is read, in the contract's order: JSON syntax (400), an object
 * (422), signature (401), schema (422). Throws a RequestRejected at the first that fails.
 */
export function parseWebhook(
  body: Buffer,
  definition: EventDefinition,
  settings: ParseSettings,
): ParsedWebhook {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new RequestRejected(
      'invalid_json',
      `The body is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (!isObject(value)) {
    throw new RequestRejected(
      'validation_failed',
      `The body must be a JSON object, not ${describe(value)}`,
      [{ path: '', message: 'expected a JSON object' }],
    );
  }
  const event = withoutSignature(value);
  const canonical = canonicalJson(event);
  if (
    settings.signatureMode === 'required' &&
    !verifyEvent(value, settings.webhookSecrets, canonical)
  ) {
    throw new RequestRejected(
      'invalid_signature',
      typeof value.signature === 'string'
        ? 'The signature does not match the event under any configured secret'
        : 'The signature is missing',
    );
  }
  const checked = definition.schema.safeParse(
    settings.signatureMode === 'off' && value.signature === undefined
      ? { ...value, signature: '' }
      : value,
  );
  if (!checked.success) {
    throw new RequestRejected(
      'validation_failed',
      `The ${definition.type} event is not valid`,
      validationDetails(checked.error),
    );
  }
  return { event, canonical, entityId: String(value[definition.entityIdField]) };
}
