// @pw/shared/intake: taking a webhook in (one partition's WebhookIntake, PartitionedIntake over
// all of them) and the first acks it keeps for repeats. Its Lua commands (intake-commands.ts) stay
// inside.
export * from './webhook-intake.js';
export * from './partitioned-intake.js';
export * from './sender-clocks.js';
export { decodeAck, encodeAck } from './kept-acks.js';
export type { KeptAck } from './kept-acks.js';
