// @pw/shared/outcomes: a webhook's outcome (its actions' states), the store that keeps and changes
// it in Redis, and waiting for one to finish. How a change is sent to Redis (outcome-change.ts,
// outcome-keys.ts) stays inside, but for what @pw/shared/lua gives script authors.
export * from './webhook-outcome.js';
export * from './bounded-error.js';
export * from './time-stamps.js';
export type { OutcomeStoreSettings } from './outcome-keys.js';
export { noCall } from './outcome-change.js';
export type { AttemptTiming } from './outcome-change.js';
export * from './outcome-wait.js';
export * from './outcome-store.js';
