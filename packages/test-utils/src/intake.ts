import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  DEFAULT_ACTIONS_CONFIG,
  OutcomeStore,
  QUEUE_NAMES,
  QUEUE_STREAMS,
  WebhookIntake,
} from '@pw/shared';
import type {
  AcceptedWebhook,
  ActionJobData,
  ActionsConfig,
  BackoffPolicy,
  WebhookJobData,
} from '@pw/shared';

export interface TestIntakeSettings {
  /** `ACTIONS_CONFIG` as the ingress reads it: each action's attempts and backoff. */
  actionsConfig?: ActionsConfig;
  /** `ACTION_ATTEMPTS`, `ACTION_BACKOFF` and `ACTION_BACKOFF_DELAY_MS` of the ingress. */
  retry: { attempts: number; backoff: BackoffPolicy };
  /** `RECORD_TTL_SECONDS`. @defaultValue 3600 */
  recordTtlSeconds?: number;
}

export interface TestIntake {
  /** The intake's answer to `webhook`: its ack, or for a repeat the first delivery's. */
  accept(webhook: WebhookJobData): Promise<AcceptedWebhook>;
  /**
   * Takes `webhook` in as the ingress does (the shared `WebhookIntake`): its record, then its
   * action jobs. Throws for a repeat of an event already taken in, which adds nothing: a test that
   * waited on its id would wait for nothing.
   */
  add(webhook: WebhookJobData): Promise<AcceptedWebhook>;
  close(): Promise<void>;
}

/**
 * The ingress's intake (the shared `WebhookIntake`, as the ingress runs it) on `prefix`, through
 * `connection`, with a deployment's deduplication window and clock skew: how every harness adds
 * webhooks, so that the worker, dashboard and recorder tests start from what production writes.
 */
export function startIntake(
  connection: Redis,
  prefix: string,
  settings: TestIntakeSettings,
): TestIntake {
  const recordTtlSeconds = settings.recordTtlSeconds ?? 3600;
  const queue = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
    connection,
    prefix,
    streams: QUEUE_STREAMS,
  });
  const outcomes = new OutcomeStore(connection, { queuePrefix: prefix, recordTtlSeconds });
  const intake = new WebhookIntake(queue, outcomes, {
    queuePrefix: prefix,
    dedupWindowSeconds: 604_800,
    maxClockSkewSeconds: 300,
    recordTtlSeconds,
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
    close: () => queue.close(),
  };
}
