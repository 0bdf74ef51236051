import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import { recordStreamKey } from './record-changes.js';
import type { AuditRecord } from './record-changes.js';

/**
 * The audit log's writer: every operator change is one log line with `audit: true` and one
 * `audit` change on the record stream, which the recorder keeps in the record store
 * `RECORD_RETENTION_DAYS` (docs/records.md). The change is made before it is audited; an
 * audit entry that cannot reach Redis is still in the log, and its failure is logged too.
 */
export class AuditLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  async record(entry: Omit<AuditRecord, 'at'>, message: string): Promise<void> {
    const full: AuditRecord = { at: new Date().toISOString(), ...entry };
    // The log line keeps the details at its top level, where log searches find them.
    this.log.info(
      {
        audit: true,
        ...full.details,
        at: full.at,
        user: full.user,
        action: full.action,
        target: full.target,
      },
      message,
    );
    try {
      await this.redis.xadd(
        recordStreamKey(this.prefix),
        '*',
        'k',
        'audit',
        'd',
        JSON.stringify(full),
      );
    } catch (error) {
      this.log.error({ err: error, audit: true, ...full }, 'audit entry not recorded in the store');
    }
  }
}
