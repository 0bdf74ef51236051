import type { Redis } from 'ioredis';
import { DEFAULT_ACTIONS_CONFIG } from '@pw/shared/actions';
import { PartitionedIntake } from '@pw/shared/intake';
import { Partitions } from '@pw/shared/queue';
import type { ActionsConfig } from '@pw/shared/actions';
import type { IntakeResult } from '@pw/shared/intake';
import type { BackoffPolicy, AcceptedWebhook } from '@pw/shared/queue';

export interface TestIntakeSettings {
  /** `ACTIONS_CONFIG` as the ingress reads it: each action's attempts and backoff. */
  actionsConfig?: ActionsConfig;
  /** `ACTION_ATTEMPTS`, `ACTION_BACKOFF` and `ACTION_BACKOFF_DELAY_MS` of the ingress. */
  retry: { attempts: number; backoff: BackoffPolicy };
  /** `RECORD_TTL_SECONDS`. @defaultValue 3600 */
  recordTtlSeconds?: number;
  /**
   * `QUEUE_PARTITIONS`: each webhook goes to the partition its id names (make ids with
   * `Partitions.newWebhookId`). @defaultValue 1
   */
  partitions?: number;
}

export interface TestIntake {
  /** The intake's answer to `webhook`: its ack, or for a repeat the first delivery's. */
  accept(webhook: AcceptedWebhook): Promise<IntakeResult>;
  /**
   * Takes `webhook` in as the ingress does (the shared `PartitionedIntake`): its record, then its
   * action jobs. Throws for a repeat of an event already taken in, which adds nothing: a test that
   * waited on its id would wait for nothing.
   */
  add(webhook: AcceptedWebhook): Promise<IntakeResult>;
  /** `PartitionedIntake.endQuarantine`: a quarantined webhook's release or discard. */
  endQuarantine(
    webhook: AcceptedWebhook,
    mode: 'release' | 'discard',
    storedNewestMs?: number,
  ): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The ingress's intake (the shared `PartitionedIntake`, as the ingress runs it) on `prefix`, through
 * `connection`, with a deployment's deduplication window and clock skew: how every harness adds
 * webhooks, so that the worker, dashboard and recorder tests start from what production writes.
 */
export function startIntake(
  connection: Redis,
  prefix: string,
  settings: TestIntakeSettings,
): TestIntake {
  const partitions = new Partitions(prefix, settings.partitions ?? 1);
  const intake = new PartitionedIntake(connection, partitions, {
    dedupWindowSeconds: 604_800,
    maxClockSkewSeconds: 300,
    recordTtlSeconds: settings.recordTtlSeconds ?? 3600,
    actionsConfig: settings.actionsConfig ?? DEFAULT_ACTIONS_CONFIG,
    retry: settings.retry,
  });
  return {
    accept: (webhook) => intake.accept(webhook),
    async add(webhook) {
      const accepted = await intake.accept(webhook);
      if (accepted.duplicate) {
        throw new Error(`${webhook.webhook_id} repeats ${accepted.ack.webhook_id}: nothing added`);
      }
      return accepted;
    },
    endQuarantine: (webhook, mode, storedNewestMs) =>
      intake.endQuarantine(webhook, mode, storedNewestMs),
    close: () => intake.close(),
  };
}
