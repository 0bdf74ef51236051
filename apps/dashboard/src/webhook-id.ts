import type { RequestParamHandler } from 'express';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';

/** `wh_` and 22 base64url characters: the 128 random bits the ingress gives every webhook. */
export const WEBHOOK_ID_PATTERN = /^wh_[A-Za-z0-9_-]{22}$/;

/** True when `text` has the form of a webhook id. */
export const isWebhookId = (text: string): boolean => WEBHOOK_ID_PATTERN.test(text);

/**
 * A `:webhookId` parameter that is not a webhook id gets 404 before any look-up: such a name
 * could only reach Redis keys that are not records (BullMQ's own `meta`, `id`, `events` ...).
 */
export const webhookIdParam: RequestParamHandler = (_req, res, next, value: string) => {
  if (isWebhookId(value)) return next();
  sendError(res, 404, DASHBOARD_ERROR_CODES.notFound, `No webhook ${value}`);
};
