import type { Logger } from '../logger.js';
import type { Partitions } from '../queue/partitions.js';
import type { RedisClient } from '../redis.js';
import { recordStreamKey } from './record-changes.js';
import type { AuditRecord } from './record-changes.js';

/**
 * The audit log's writer: every operator change is one log line with `audit: true` and one
 * `audit` change on the record stream, which the recorder keeps in the record store
 * `RECORD_RETENTION_DAYS` (docs/records.md). The change is made before it is audited; an
 * audit entry that cannot reach Redis is still in the log, and its failure is logged too.
 *
 * Every entry goes to partition 0's record stream, whatever webhook it names: the store keys an
 * audit entry by its stream id alone (`audit_entries.seq`), and ids are unique within one stream
 * only, so two entries made in the same millisecond on two partitions' streams would be one row,
 * the other lost. Operator changes are few: one stream carries them.
 */
export class AuditLog {
  private readonly stream: string;

  constructor(
    private readonly redis: RedisClient,
    /** The queue partitions, or a queue prefix (one partition). */
    partitions: Partitions | string,
    private readonly log: Logger,
  ) {
    const prefix = typeof partitions === 'string' ? partitions : partitions.prefix(0);
    this.stream = recordStreamKey(prefix);
  }

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
      await this.redis.xadd(this.stream, '*', 'k', 'audit', 'd', JSON.stringify(full));
    } catch (error) {
      this.log.error({ err: error, audit: true, ...full }, 'audit entry not recorded in the store');
    }
  }
}
