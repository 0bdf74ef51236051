import type { ActionCall, ActionName, ActionsConfig, ActionSpec } from '@pw/shared/actions';
import type { Logger } from '@pw/shared/runtime';
import type { PartnerTarget } from '../config.js';
import type { PartnerApi, PartnerResponse } from '../partner-api.js';

export interface ActionContext {
  webhookId: string;
  action: ActionName;
  log: Logger;
  /** The partner API, bound to this event's target (market realm or the default). */
  api: { call(call: { method: string; path: string; body: unknown }): Promise<PartnerResponse> };
  /** The call to make, after `ACTIONS_CONFIG` overrides, its path filled from the event. */
  call: ActionCall;
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

/** An action as the worker runs it: its row of the shared action table and its handler. */
export interface ActionDefinition extends ActionSpec {
  handler: ActionHandler;
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
      path: ctx.call.path,
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
