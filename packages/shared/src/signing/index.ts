// @pw/shared/signing: canonical JSON and the events' HMAC signatures.
export * from './canonical-json.js';
export * from './signature.js';
