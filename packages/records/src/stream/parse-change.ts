import { fromRecord } from '@pw/shared/outcomes';
import { COMPLETED_KIND } from '@pw/shared/records';
import type { AttemptRecord, AuditRecord, WebhookEntry, CompletedEntry } from '@pw/shared/records';
import { streamIdTime, streamIdToSeq } from './changes.js';
import type { RecordChange } from './changes.js';
import { ORIGIN_FIELD } from './rejected-changes.js';

/** A stream entry as ioredis returns it: its id and its flat field/value list. */
export type StreamEntry = [id: string, fields: string[]];

/**
 * The changes one stream entry stands for, ordered by the entry's id (or, for a re-driven one, the
 * id it first had) (the store opens a `webhook` change `queued`, every
 * action waiting); an outcome entry's attempt takes its number from the record after the change.
 * Throws on an entry it cannot read.
 */
export function parseChange([id, flat]: StreamEntry): RecordChange[] {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] ?? '', flat[i + 1] ?? '');
  // A change re-driven after it was set aside keeps its place among its webhook's changes.
  const origin = fields.get(ORIGIN_FIELD) ?? id;
  const seq = streamIdToSeq(origin);
  const at = streamIdTime(origin);
  const data = JSON.parse(fields.get('d') ?? 'null') as unknown;
  switch (fields.get('k')) {
    case 'webhook': {
      const webhook = data as WebhookEntry;
      // Stale from the start (an older event than one its entity had): the intake says so.
      return [
        {
          kind: 'webhook',
          seq,
          at,
          webhook: fields.get('s') === '1' ? { ...webhook, stale: true } : webhook,
        },
      ];
    }
    case 'outcome': {
      const outcome = fromRecord(data as Record<string, string>);
      if (!outcome.webhook_id) throw new Error(`entry ${id}: an outcome without its webhook`);
      const text = fields.get('a');
      const attempt = text
        ? (JSON.parse(text) as Omit<AttemptRecord, 'attempt'> & { action: string })
        : null;
      const action = outcome.actions.find((candidate) => candidate.name === attempt?.action);
      return [
        {
          kind: 'outcome',
          seq,
          at,
          outcome,
          attempt: attempt && { ...attempt, attempt: action?.attempts ?? 0 },
        },
      ];
    }
    case COMPLETED_KIND: {
      const done = data as Partial<CompletedEntry> | null;
      if (!done?.webhook_id || !done.action || !done.started_at || !done.finished_at) {
        throw new Error(`entry ${id}: a completion without its webhook, action or times`);
      }
      // Written by the previous release without its number: it wrote first calls only.
      if (done.attempt !== undefined && !Number.isInteger(done.attempt)) {
        throw new Error(`entry ${id}: a completion whose attempt is not a number`);
      }
      return [
        {
          kind: 'completed',
          seq,
          at,
          webhook_id: done.webhook_id,
          attempt: {
            action: done.action,
            attempt: done.attempt ?? 1,
            started_at: done.started_at,
            finished_at: done.finished_at,
            outcome: 'completed',
            status: done.status ?? null,
            error: null,
            duration_ms: done.duration_ms ?? 0,
          },
        },
      ];
    }
    case 'audit':
      return [{ kind: 'audit', seq, at, entry: data as AuditRecord }];
    default:
      throw new Error(`entry ${id}: unknown kind ${fields.get('k')}`);
  }
}
