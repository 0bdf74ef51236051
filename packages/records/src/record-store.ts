import pg from 'pg';
import { SUMMARY_PROBLEMS } from '@pw/shared/operator-api';
import { orderTime } from '@pw/shared/queue';
import { invalidArgument } from '@pw/shared/runtime';
import type { AuditRecord } from '@pw/shared/records';
import { batchRows } from './batch-rows.js';
import { readLedger } from './ledger.js';
import { MIGRATIONS_DIRECTORY, migrate } from './migrate.js';
import { purge } from './purge.js';
import { encodeCursor } from './query-input.js';
import {
  actionsQuery,
  auditQuery,
  historyQuery,
  searchQuery,
  webhookQuery,
} from './read-queries.js';
import { groupBy, toAttempt, toAuditEntry, toSummary } from './read-rows.js';
import type { StoredAction, StoredAttempt, StoredAuditEntry, StoredSummary } from './read-rows.js';
import type {
  AuditPage,
  AuditQuery,
  IngressCount,
  Ledger,
  PurgeOptions,
  PurgeResult,
  QuarantineFilter,
  QuarantinedEvent,
  QuarantinedSummary,
  QuarantinePage,
  SearchFilter,
  SearchPage,
  WebhookRecord,
} from './record-types.js';
import type { RecordChange } from './stream/changes.js';
import { transaction } from './transaction.js';
import { writeIngressCounts, writeRows } from './write-rows.js';

/** A quarantined webhook's summary as `QUARANTINE_SUMMARIES` reads it. */
export type KeptSummary = Pick<
  QuarantinedSummary,
  'webhook_id' | 'size' | 'problem_count' | 'problems'
>;

/**
 * The summaries of quarantined webhooks `$1`: the size of each event's JSON text, how many
 * problems it has, and the first `$2` of them.
 */
const QUARANTINE_SUMMARIES = `
  select w.webhook_id,
         coalesce(octet_length(w.event::text), 0)::int as size,
         coalesce(jsonb_array_length(w.problems), 0)::int as problem_count,
         coalesce(
           (select jsonb_agg(p.value order by p.ordinality)
              from jsonb_array_elements(w.problems) with ordinality as p
             where p.ordinality <= $2),
           '[]'::jsonb) as problems
    from webhooks w
   where w.webhook_id = any($1)`;

export interface RecordStoreOptions {
  /** A PostgreSQL connection string (`DATABASE_URL`). */
  databaseUrl: string;
  /**
   * The schema, which must exist, holding the store's tables. @defaultValue the connection's own
   * `search_path` (`public`, unless the connection string's `options` set another)
   */
  schema?: string;
  /** Connections at most. @defaultValue 5 */
  poolSize?: number;
  /** The folder of the migration files. @defaultValue this package's `migrations/` */
  migrationsDirectory?: URL;
  /**
   * Told when an idle connection fails (PostgreSQL restarted); the pool replaces it by itself.
   * @defaultValue ignores it: the next query fails or reconnects, and its caller hears of it
   */
  onPoolError?: (error: Error) => void;
}

/** Reads that take several statements see one snapshot: a page never mixes two batches. */
const READ_SNAPSHOT = 'begin isolation level repeatable read read only';

/**
 * The record store (docs/records.md) in PostgreSQL: the recorder writes batches of changes to
 * it, the operator API reads webhooks, their history, the audit log and the ledger from it.
 */
export class RecordStore {
  private constructor(private readonly pool: pg.Pool) {}

  /** Connects and brings the schema up to date (migrations). */
  static async open(options: RecordStoreOptions): Promise<RecordStore> {
    const pool = createPool(options);
    try {
      await migrate(pool, options.migrationsDirectory ?? MIGRATIONS_DIRECTORY);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new RecordStore(pool);
  }

  /**
   * Connects without migrating, for a reader (the dashboard) beside the recorder that migrates:
   * nothing is asked of PostgreSQL until the first read, so a store that is down fails only the
   * reads.
   */
  static connect(options: RecordStoreOptions): RecordStore {
    return new RecordStore(createPool(options));
  }

  /** Closes its connections; closing again does nothing. */
  async close(): Promise<void> {
    if (!this.pool.ending) await this.pool.end();
  }

  /** Resolves when PostgreSQL answers. */
  async ping(): Promise<void> {
    await this.pool.query('select 1');
  }

  /**
   * Writes a batch of changes in one transaction. Idempotent, and never moves a record backwards:
   * a row keeps the fields of the newest change (by `seq`) written to it. Returns the webhooks of
   * the batch the store now has finished for good (completed or discarded), whose hot records the
   * recorder shortens (`writeRows`).
   */
  async writeBatch(changes: readonly RecordChange[]): Promise<string[]> {
    if (changes.length === 0) return [];
    const rows = batchRows(changes);
    return transaction(this.pool, (client) => writeRows(client, rows));
  }

  /** Writes minutes' running totals of the ingress's codes. */
  async writeIngressCounts(counts: readonly IngressCount[]): Promise<void> {
    await writeIngressCounts(this.pool, counts);
  }

  /** A webhook's whole outcome record, with its event and attempt history; null when unknown. */
  async webhook(webhookId: string): Promise<WebhookRecord | null> {
    return transaction(
      this.pool,
      async (client) => {
        const { rows } = await client.query<
          StoredSummary & Pick<WebhookRecord, 'event' | 'problems'>
        >(webhookQuery(webhookId));
        const row = rows[0];
        if (!row) return null;
        const actions = await client.query<StoredAction>(actionsQuery([webhookId]));
        const history = await client.query<StoredAttempt>(historyQuery(webhookId));
        const attempts = groupBy(history.rows, (attempt) => attempt.action);
        const summary = toSummary(row, actions.rows);
        return {
          ...summary,
          event: row.event,
          problems: row.problems,
          actions: summary.actions.map((action) => ({
            ...action,
            history: (attempts.get(action.name) ?? []).map(toAttempt),
          })),
        };
      },
      READ_SNAPSHOT,
    );
  }

  /** Webhooks matching every filter given, newest first, a page at a time. */
  async search(filter: SearchFilter = {}): Promise<SearchPage> {
    const query = searchQuery(filter);
    return transaction(
      this.pool,
      async (client) => {
        const { rows } = await client.query<StoredSummary>(query);
        const page = rows.slice(0, query.limit);
        const ids = page.map((row) => row.webhook_id);
        const actions =
          ids.length > 0 ? (await client.query<StoredAction>(actionsQuery(ids))).rows : [];
        const byWebhook = groupBy(actions, (action) => action.webhook_id);
        const last = page.at(-1);
        return {
          webhooks: page.map((row) => toSummary(row, byWebhook.get(row.webhook_id) ?? [])),
          next_cursor:
            rows.length > query.limit && last
              ? encodeCursor(last.received_at.toISOString(), last.webhook_id)
              : null,
        };
      },
      READ_SNAPSHOT,
    );
  }

  /**
   * Quarantined webhooks (authentic events that failed their schema), newest first, a page at a
   * time: search's page of state `quarantined`, each summed up (its size, its first problems),
   * never with its event, so that a page weighs the same whatever the events weigh.
   */
  async quarantined(filter: QuarantineFilter = {}): Promise<QuarantinePage> {
    const page = await this.search({ ...filter, state: 'quarantined' });
    const kept = await this.quarantineSummaries(page.webhooks.map((webhook) => webhook.webhook_id));
    return {
      quarantined: page.webhooks.map(({ webhook_id, event_type, entity_id, received_at }) => ({
        webhook_id,
        event_type,
        entity_id,
        received_at,
        size: kept.get(webhook_id)?.size ?? 0,
        problem_count: kept.get(webhook_id)?.problem_count ?? 0,
        problems: kept.get(webhook_id)?.problems ?? [],
      })),
      next_cursor: page.next_cursor,
    };
  }

  /** The size and first problems of some webhooks' kept events, by id (`QuarantinedSummary`). */
  async quarantineSummaries(ids: readonly string[]): Promise<Map<string, KeptSummary>> {
    const { rows } = await this.pool.query<KeptSummary>(QUARANTINE_SUMMARIES, [
      ids,
      SUMMARY_PROBLEMS,
    ]);
    return new Map(rows.map((row) => [row.webhook_id, row]));
  }

  /**
   * The kept events of some quarantined webhooks, with every problem, by id (those not quarantined
   * left out): what a dry run judges, read a few megabytes at a time (`Quarantine.preview`).
   */
  async quarantinedEvents(
    ids: readonly string[],
  ): Promise<Map<string, Pick<QuarantinedEvent, 'event' | 'problems'>>> {
    const { rows } = await this.pool.query<
      Pick<QuarantinedEvent, 'webhook_id' | 'event'> & {
        problems: QuarantinedEvent['problems'] | null;
      }
    >(
      `select webhook_id, event, problems from webhooks
        where webhook_id = any($1) and state = 'quarantined' and event is not null`,
      [ids],
    );
    return new Map(
      rows.map((row) => [row.webhook_id, { event: row.event, problems: row.problems ?? [] }]),
    );
  }

  /**
   * The newest order time (ms) of the events of an entity that the store holds as webhooks taken
   * in (quarantined and discarded ones left out), each the earlier of its `timestamp` and when it
   * was received (`orderTime`, as the intake orders them); undefined for none. A release judges a
   * kept event against it as well as against Redis, which remembers an entity's newest time only
   * as long as a dead letter.
   */
  async newestEventTime(eventType: string, entityId: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ timestamp: string | null; received_at: Date }>(
      `select event->>'timestamp' as timestamp, received_at from webhooks
        where md5(entity_id) = md5($1) and entity_id = $1 and event_type = $2
          and state not in ('quarantined', 'discarded')`,
      [entityId, eventType],
    );
    let newest: number | undefined;
    for (const row of rows) {
      const time = orderTime({ timestamp: row.timestamp }, row.received_at.getTime());
      if (time !== undefined && (newest === undefined || time > newest)) newest = time;
    }
    return newest;
  }

  /** The audit log, newest first, a page at a time. */
  async audit(query: AuditQuery = {}): Promise<AuditPage> {
    const statement = auditQuery(query);
    const { rows } = await this.pool.query<StoredAuditEntry>(statement);
    const page = rows.slice(0, statement.limit);
    const last = page.at(-1);
    return {
      entries: page.map((row): AuditRecord => toAuditEntry(row)),
      next_cursor:
        rows.length > statement.limit && last
          ? encodeCursor(last.at.toISOString(), last.seq)
          : null,
    };
  }

  /** Where the webhooks accepted in [from, to) stand, widened to whole minutes. */
  async ledger(interval: { from: string; to: string }): Promise<Ledger> {
    return readLedger(this.pool, interval.from, interval.to);
  }

  /** Deletes webhooks (with their actions and attempts), audit entries and counts past retention. */
  async purge(options: PurgeOptions): Promise<PurgeResult> {
    return purge(this.pool, options);
  }
}

/** A lower-case SQL identifier: safe in `search_path` unquoted, and read the same. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function createPool(options: RecordStoreOptions): pg.Pool {
  const { schema } = options;
  const poolSize = options.poolSize ?? 5;
  if (schema !== undefined && !SCHEMA_NAME.test(schema))
    throw invalidArgument(`not a schema name: ${JSON.stringify(schema)}`);
  if (!Number.isInteger(poolSize) || poolSize < 1) throw invalidArgument('poolSize must be >= 1');
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: poolSize,
    // Everything the store runs names its tables unqualified.
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
    // PostgreSQL out of reach fails a call in time, rather than leaving it waiting.
    connectionTimeoutMillis: 10_000,
  });
  // Without a listener, an idle connection's error would end the process.
  pool.on('error', options.onPoolError ?? (() => undefined));
  return pool;
}
