import { CONTRACT_EVENT } from '../events/contract.js';
import { QUOTE_EVENT } from '../events/quote.js';
import type { EventType } from '../events/registry.js';
import { SALES_OPPORTUNITY_EVENT } from '../events/sales-opportunity.js';
import type { Condition } from '../rules/routing-rules.js';

/** The methods a partner-API call can use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** The partner-API call an action makes, relative to the API base. */
export interface ActionCall {
  method: HttpMethod;
  /** With `{field.path}` placeholders, each filled from the event as one path segment. */
  path: string;
}

/** One row of the table: `call` is written as in the contract, `POST /path/{placeholder}`. */
interface ActionRow {
  event: EventType;
  call: `${HttpMethod} /${string}`;
  changesState: boolean;
  when: readonly Condition[];
}

/**
 * Every built-in action (docs/architecture.md): the one place an action is added. Its name, the
 * event type that sets it off, its default call (`ACTIONS_CONFIG` can change method and path),
 * whether it changes the partner's state, and its default routing rule (every condition must
 * hold; none: always). The action names, each event's actions, the default rules and the
 * worker's definitions are all read from here.
 */
// prettier-ignore
const ACTION_TABLE = {
  notify_customer:          { event: QUOTE_EVENT,             call: 'POST /customers/{customer_id}/notifications',         changesState: false, when: [] },
  update_sales_opportunity: { event: QUOTE_EVENT,             call: 'POST /sales-opportunities/by-quote/{quote_ref_code}', changesState: true,  when: [] },
  lock_price:               { event: QUOTE_EVENT,             call: 'POST /quotes/{quote_id}/price-lock',                  changesState: true,  when: [{ path: 'status', equals: 'approved' }] },
  generate_documents:       { event: CONTRACT_EVENT,          call: 'POST /contracts/{contract_id}/documents',             changesState: false, when: [] },
  send_welcome_message:     { event: CONTRACT_EVENT,          call: 'POST /customers/{customer_id}/welcome-messages',      changesState: false, when: [{ path: 'status', equals: 'active' }] },
  activate_service:         { event: CONTRACT_EVENT,          call: 'POST /contracts/{contract_id}/activation',            changesState: true,  when: [{ path: 'status', equals: 'active' }] },
  start_billing:            { event: CONTRACT_EVENT,          call: 'POST /contracts/{contract_id}/billing',               changesState: true,  when: [{ path: 'status', equals: 'active' }] },
  update_crm:               { event: SALES_OPPORTUNITY_EVENT, call: 'PUT /crm/opportunities/{sales_id}',                   changesState: true,  when: [] },
  calculate_commission:     { event: SALES_OPPORTUNITY_EVENT, call: 'POST /commissions',                                   changesState: false, when: [{ path: 'opportunity_status', equals: 'converted' }] },
  update_metrics:           { event: SALES_OPPORTUNITY_EVENT, call: 'POST /metrics/conversions',                           changesState: false, when: [{ path: 'opportunity_status', equals: 'converted' }] },
  start_follow_up_sequence: { event: SALES_OPPORTUNITY_EVENT, call: 'POST /customers/{customer_id}/follow-up-sequences',   changesState: true,  when: [{ path: 'opportunity_status', in: ['qualified', 'created'] }] },
} satisfies Record<string, ActionRow>;

export type ActionName = keyof typeof ACTION_TABLE;

/** One built-in action, as read from the table. */
export interface ActionSpec {
  /** The event type whose webhooks set it off. */
  eventType: EventType;
  /** The call it makes unless `ACTIONS_CONFIG` changes its method or path. */
  call: ActionCall;
  /**
   * It changes the partner's state for the entity (price lock, activation, CRM stage...), so an
   * out-of-order event must not run it (`skip_when_stale` in `ACTIONS_CONFIG` overrides this).
   * Messages and records of something that did happen (notifications, documents, commission,
   * metrics) are not.
   */
  changesState: boolean;
  /** The default routing rule: every condition must hold (none: always). */
  when: readonly Condition[];
}

/** Every action a webhook can set off, in the table's order. */
export const ACTION_NAMES = Object.keys(ACTION_TABLE) as readonly ActionName[];

export const isActionName = (name: string): name is ActionName => Object.hasOwn(ACTION_TABLE, name);

/** A row as the rest of the code reads it, its call split into method and path. */
function specOf({ event, call, changesState, when }: ActionRow): ActionSpec {
  const space = call.indexOf(' ');
  const method = call.slice(0, space) as HttpMethod;
  return { eventType: event, call: { method, path: call.slice(space + 1) }, changesState, when };
}

const specs = Object.fromEntries(ACTION_NAMES.map((name) => [name, specOf(ACTION_TABLE[name])]));

/** Every action's spec, by name. */
export const ACTION_SPECS = Object.freeze(specs) as Readonly<Record<ActionName, ActionSpec>>;

/** The actions an event type can set off, in the table's order. */
export const actionsOf = (eventType: EventType): ActionName[] =>
  ACTION_NAMES.filter((name) => ACTION_SPECS[name].eventType === eventType);
