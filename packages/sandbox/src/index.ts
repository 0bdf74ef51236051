export * from './identity-provider.js';
export * from './partner-api.js';
export * from './sandbox.js';
