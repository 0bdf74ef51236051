// @pw/shared/config: the apps' environment variables, read and checked (env.ts), the webhook
// signing secrets (signing-env.ts) and `npm start`'s own settings (start-env.ts).
export * from './env.js';
export * from './signing-env.js';
export * from './start-env.js';
