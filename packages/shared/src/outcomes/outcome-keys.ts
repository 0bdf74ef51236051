/** The outcome record of one webhook: a hash, fields per action (`<action>:state`, ...). */
export const outcomeKey = (queuePrefix: string, webhookId: string): string =>
  `${queuePrefix}:outcome:${webhookId}`;

/** The channel that carries the id of every webhook whose record changed. */
export const outcomeChannel = (queuePrefix: string): string => `${queuePrefix}:outcome-changes`;

export interface OutcomeStoreSettings {
  queuePrefix: string;
  /** Seconds a record is kept after its last change (`RECORD_TTL_SECONDS`). */
  recordTtlSeconds: number;
}
