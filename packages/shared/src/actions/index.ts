// @pw/shared/actions: the actions an event sets off and the partner-API calls they make
// (action-table.ts), and their settings (actions-config.ts, ACTIONS_CONFIG).
export * from './action-table.js';
export * from './actions-config.js';
