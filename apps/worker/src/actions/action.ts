import type { ActionName, EventType, Logger } from '@pw/shared';
import { PermanentError, valueAt } from '@pw/shared';
import type { ActionsConfig } from '@pw/shared';
import type { PartnerTarget } from '../config.js';
import type { PartnerApi, PartnerResponse } from '../partner-api.js';

/** The partner-API call an action makes by default; `ACTIONS_CONFIG` can change both. */
export interface DefaultCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** With `{field.path}` placeholders filled from the event. */
  path: string;
}

export interface ActionContext {
  webhookId: string;
  action: ActionName;
  log: Logger;
  /** The partner API, bound to this event's target (market realm or the default). */
  api: { call(call: { method: string; path: string; body: unknown }): Promise<PartnerResponse> };
  /** The call to make, after `ACTIONS_CONFIG` overrides. */
  call: DefaultCall;
  /** 1 for the first try. */
  attempt: number;
  signal: AbortSignal;
  config: ActionsConfig;
}

export interface Outcome {
  status: number;
}

/** What an action does with one event. */
export type ActionHandler = (
  event: Record<string, unknown>,
  ctx: ActionContext,
) => Promise<Outcome>;

export interface ActionDefinition {
  eventType: EventType;
  call: DefaultCall;
  handler: ActionHandler;
  /**
   * It changes the partner's state for the entity (price lock, activation, CRM stage...), so an
   * out-of-order event must not run it (`skip_when_stale` in `ACTIONS_CONFIG` overrides this).
   * Messages and records of something that did happen (notifications, documents, commission,
   * metrics) are not.
   */
  changesState: boolean;
}

/** Fills `{customer_id}` or `{metadata.market}` from the event; a missing value is permanent. */
export function expandPath(template: string, event: Record<string, unknown>): string {
  return template.replace(/\{([^}]+)\}/g, (_, path: string) => {
    const value = valueAt(event, path);
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new PermanentError('missing_field', `the event has no ${path} for ${template}`);
    }
    if (value === '') throw new PermanentError('missing_field', `the event's ${path} is empty`);
    return encodeURIComponent(String(value));
  });
}

/**
 * The usual handler: one call with `{ webhook_id, action, event }` plus the action's own fields.
 */
export function callPartnerApi(
  extraFields?: (event: Record<string, unknown>, ctx: ActionContext) => Record<string, unknown>,
): ActionHandler {
  return async (event, ctx) => {
    const body = {
      webhook_id: ctx.webhookId,
      action: ctx.action,
      event,
      ...extraFields?.(event, ctx),
    };
    const response = await ctx.api.call({
      method: ctx.call.method,
      path: expandPath(ctx.call.path, event),
      body,
    });
    return { status: response.status };
  };
}

/** Binds the partner API to one event's target and idempotency key. */
export function boundApi(
  api: PartnerApi,
  target: PartnerTarget,
  idempotencyKey: string,
  signal: AbortSignal,
) {
  return {
    call: (call: { method: string; path: string; body: unknown }) =>
      api.call(target, { ...call, idempotencyKey, signal }),
  };
}
