import type { Logger } from '../logger.js';
import { Partitions } from '../queue/partitions.js';
import type { RedisClient } from '../redis.js';
import { recordStreamKey } from './record-changes.js';
import type { AuditRecord } from './record-changes.js';

/** A webhook id at the start of an audit target (`wh_…`, or a job id `wh_….<action>`). */
const WEBHOOK_TARGET = /^wh_[A-Za-z0-9_-]{22}(?=$|\.)/;

/**
 * The audit log's writer: every operator change is one log line with `audit: true` and one
 * `audit` change on the record stream, which the recorder keeps in the record store
 * `RECORD_RETENTION_DAYS` (docs/records.md). The change is made before it is audited; an
 * audit entry that cannot reach Redis is still in the log, and its failure is logged too. An entry
 * about a webhook (or one of its jobs) goes to the record stream of that webhook's partition,
 * any other to partition 0's.
 */
export class AuditLog {
  private readonly partitions: Partitions;

  constructor(
    private readonly redis: RedisClient,
    /** The queue partitions, or a queue prefix (one partition). */
    partitions: Partitions | string,
    private readonly log: Logger,
  ) {
    this.partitions = typeof partitions === 'string' ? new Partitions(partitions) : partitions;
  }

  /** The record stream an entry about `target` goes to. */
  private streamOf(target: string): string {
    const webhookId = WEBHOOK_TARGET.exec(target)?.[0];
    const index = webhookId === undefined ? 0 : this.partitions.ofWebhookId(webhookId);
    return recordStreamKey(this.partitions.prefix(index));
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
      await this.redis.xadd(
        this.streamOf(full.target),
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
