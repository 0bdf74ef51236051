// What a failed soak says about a webhook not final after the drain, read before the system
// stops: what an operator sees (the operator API), what the record store has, where each of its
// action jobs stands in BullMQ, and the partner calls made for it. A line each, so that a run that fails once tells why.
import { Queue } from 'bullmq';
import type { RecordedCall } from '@pw/sandbox';
import { actionJobId, QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import type { Store } from './checks.js';
import { QUEUE_PREFIX } from './system.js';
import type { SoakSystem } from './system.js';

/** At most this many stuck webhooks are described. */
const DESCRIBED = 3;

async function operatorView(system: SoakSystem, webhookId: string) {
  const { user, password } = system.credentials;
  const response = await fetch(`${system.dashboardUrl}/api/webhooks/${webhookId}`, {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
  });
  if (!response.ok) return { status: response.status };
  // The event itself is left out: the store has it.
  const { event: _event, ...record } = (await response.json()) as {
    event?: unknown;
    actions?: { name: string }[];
  };
  return record;
}

async function jobView(queue: Queue<ActionJobData>, jobId: string) {
  const job = await queue.getJob(jobId);
  if (!job) return { job_id: jobId, state: 'none' };
  const logs = await queue.getJobLogs(jobId, 0, 20);
  return {
    job_id: jobId,
    state: await job.getState(),
    attempts_made: job.attemptsMade,
    attempts_started: job.attemptsStarted,
    stalled: job.stalledCounter,
    failed_reason: job.failedReason,
    processed_on: job.processedOn,
    finished_on: job.finishedOn,
    delay: job.delay,
    logs: logs.logs,
  };
}

const at = (ms: number) => new Date(ms).toISOString();

/** The first few of `stuck`, a line of JSON each. */
export async function stuckDetails(
  system: SoakSystem,
  stuck: readonly string[],
  calls: readonly RecordedCall[],
  store: Store,
): Promise<string[]> {
  if (stuck.length === 0) return [];
  return withActionsQueue(system, (queue) =>
    Promise.all(
      stuck.slice(0, DESCRIBED).map(async (webhookId) => {
        const record = await operatorView(system, webhookId);
        const names = ('actions' in record ? (record.actions ?? []) : []).map(
          (action) => action.name,
        );
        const jobs = await Promise.all(
          names.map((name) => jobView(queue, actionJobId(webhookId, name))),
        );
        const partnerCalls = calls
          .filter((call) => call.headers['idempotency-key']?.startsWith(webhookId))
          .map((call) => `${call.method} ${call.path} ${call.status} at ${at(+call.at)}`);
        const stored = {
          webhook: store.webhooks.get(webhookId),
          actions: store.actions.filter((action) => action.webhook_id === webhookId),
        };
        const details = { record, stored, jobs, partner_calls: partnerCalls };
        return `stuck ${webhookId}: ${JSON.stringify(details)}`;
      }),
    ),
  );
}

/** Runs `read` with the soak system's actions queue, closed after. */
export async function withActionsQueue<T>(
  system: SoakSystem,
  read: (queue: Queue<ActionJobData>) => Promise<T>,
): Promise<T> {
  const redis = system.redis.client();
  const queue = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
    connection: redis,
    prefix: QUEUE_PREFIX,
  });
  try {
    return await read(queue);
  } finally {
    await queue.close();
    redis.disconnect();
  }
}
