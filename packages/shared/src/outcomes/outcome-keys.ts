import { keys } from '../queue/redis-keys.js';

/** The outcome record of one webhook: a hash, fields per action (`<action>:state`, ...). */
export const outcomeKey = (queuePrefix: string, webhookId: string): string =>
  keys.outcome(queuePrefix, webhookId);

export interface OutcomeStoreSettings {
  queuePrefix: string;
  /** Seconds a record is kept after its last change (`RECORD_TTL_SECONDS`). */
  recordTtlSeconds: number;
}
