// `npm run soak`: the whole system under faults on a schedule, then checks from the outside that
// nothing acknowledged was lost, no partner effect happened twice, no ordinary action was
// dead-lettered and the partner was spared during its outages (docs/reliability-and-security.md).
// Exits 0 only when every check holds.
import { writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { QUEUE_NAMES } from '@pw/shared/queue';
import { BOUNDED_KINDS, memoryByKind } from '@pw/test-utils';
import type { KindFigure } from '@pw/test-utils';
import { completionTimes, finalCount, findings, percentiles, readStore } from './checks.js';
import { FaultEvents } from './fault-events.js';
import { runFaults, schedule } from './faults.js';
import type { FaultRecord } from './faults.js';
import { parseSoakArgs, USAGE } from './options.js';
import type { SoakOptions } from './options.js';
import { outageCalls } from './outage-calls.js';
import { BYTES_PER_WEBHOOK_BOUND, judge, table } from './report.js';
import type { Judged, SoakReport } from './report.js';
import {
  ACTION_ATTEMPTS,
  COUNTS,
  PARTNER_TARGETS,
  QUEUE_PREFIX,
  startSoakSystem,
  Teardown,
  WORKER_SETTINGS,
} from './system.js';
import type { SoakSystem } from './system.js';
import { drive, plan } from './traffic.js';
import type { Delivery, Purpose } from './traffic.js';
import { listeningAddresses } from './listening.js';
import { stuckDetails } from './stuck-details.js';
import { backwardsDetails } from './order-details.js';

export type { SoakReport } from './report.js';

const log = (line: string) => process.stdout.write(`soak: ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the system's keys hold in Redis, by kind (`MEMORY USAGE`, as the bench reads them), but for
 * the keys that name one of the webhooks `leftOut`.
 */
async function keyBytes(
  system: SoakSystem,
  leftOut: readonly string[] = [],
): Promise<Map<string, KindFigure>> {
  const redis = system.redis.client();
  try {
    return await memoryByKind(redis, QUEUE_PREFIX, [QUEUE_NAMES.actions], {
      keep: (key) => !leftOut.some((webhookId) => key.includes(webhookId)),
    });
  } finally {
    redis.disconnect();
  }
}

/**
 * How the keys grew over the run: bytes per finished webhook in the kinds that grow with
 * webhooks, and bytes in all in the kinds bounded whatever the traffic (BullMQ's capped events
 * stream, its queue sets, the per-minute counts), which a short run would otherwise spread over too
 * few webhooks.
 */
function growth(before: Map<string, KindFigure>, after: Map<string, KindFigure>, webhooks: number) {
  let growing = 0;
  let shared = 0;
  const byKind: Record<string, number> = {};
  for (const [kind, { bytes }] of after) {
    const grown = bytes - (before.get(kind)?.bytes ?? 0);
    byKind[kind] = grown;
    if (BOUNDED_KINDS.has(kind)) shared += grown;
    else growing += grown;
  }
  return {
    bytes_per_webhook: Math.round(growing / Math.max(1, webhooks)),
    shared_bytes: shared,
    grown_by_kind: byKind,
  };
}

/** Every port the system's apps listen on. */
const appPorts = (system: SoakSystem) =>
  system.apps.flatMap((app) =>
    ['INGRESS_PORT', 'DASHBOARD_PORT', 'WORKER_HEALTH_PORT', 'RECORDER_HEALTH_PORT'].flatMap(
      (name) => (app.env[name] ? [Number(app.env[name])] : []),
    ),
  );

/** Webhooks of the sweep (`redisGrowth`). */
const SWEEP = 10;

async function ledger(system: SoakSystem, from: Date) {
  const to = new Date(Date.now() + 120_000);
  const { user, password } = system.credentials;
  const response = await fetch(
    `${system.dashboardUrl}/api/ledger?from=${from.toISOString()}&to=${to.toISOString()}`,
    {
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    },
  );
  return (await response.json()) as Record<string, unknown> & { balanced?: boolean };
}

/** Waits until the store has every acknowledged webhook in a final state, or the time is up. */
async function drain(system: SoakSystem, ids: string[], seconds: number) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const store = await readStore(system.storeUrl, ids);
    const final = finalCount(store, ids);
    if (final === ids.length || Date.now() > deadline) return store;
    log(`draining: ${final} of ${ids.length} acknowledged webhooks final in the store`);
    await sleep(2000);
  }
}

/**
 * Redis's growth over the run, once its finished records have expired. BullMQ removes completed
 * jobs past their age only as later jobs complete, so a few more webhooks go through the whole
 * path first; their own jobs and records, the newest, stay whatever the run's length, and are left
 * out (the bench counts them, spread over its 2,000 webhooks a round), as are the webhooks
 * `leftOut` (those with a dead letter, kept for operators for days, not `RECORD_TTL_SECONDS`).
 */
async function redisGrowth(
  system: SoakSystem,
  baseline: Map<string, KindFigure>,
  webhooks: number,
  leftOut: readonly string[],
) {
  const sweep = plan({ webhooks: SWEEP, rate: 10, ingressUrls: [], invalidShare: 0, pairShare: 0 });
  const swept = await drive(sweep, {
    webhooks: SWEEP,
    rate: 10,
    ingressUrls: system.ingressUrls,
    redeliveryShare: 0,
    giveUpAt: () => Date.now() + 60_000,
  });
  const sweptIds = swept.flatMap((d) => (d.ack ? [d.ack.webhook_id] : []));
  await drain(system, sweptIds, 60);
  return growth(baseline, await keyBytes(system, [...sweptIds, ...leftOut]), webhooks);
}

/** What the sending did: every event's delivery (the faults' added last) and the faults. */
interface Sent {
  deliveries: Delivery[];
  faults: FaultRecord[];
  fault_events: SoakReport['sent']['fault_events'];
}

/** Sends the traffic while the faults happen; resolves once every event is acknowledged. */
async function send(system: SoakSystem, options: SoakOptions): Promise<Sent> {
  const events = plan({ ...options, ingressUrls: system.ingressUrls });
  const sendSeconds = options.webhooks / options.rate;
  const faultPlan = schedule(options.faults, sendSeconds);
  log(`sending ${events.length} events at ${options.rate}/s for ${sendSeconds.toFixed(0)} s`);
  let giveUpAt = Infinity;
  const added = new FaultEvents({
    ingressUrls: system.ingressUrls,
    giveUpAt: () => giveUpAt,
    firstId: events.length,
  });
  const start = performance.now();
  const [deliveries, faults] = await Promise.all([
    drive(events, { ...options, ingressUrls: system.ingressUrls, giveUpAt: () => giveUpAt }),
    runFaults(system, added, faultPlan, start, log).then((done) => {
      // Once every fault is over and every event sent, one still unacknowledged a minute later
      // never will be.
      const sendEnd = Date.now() + (start + sendSeconds * 1000 - performance.now());
      giveUpAt = Math.max(Date.now(), sendEnd) + 60_000;
      return done;
    }),
  ]);
  const extra = await added.settled();
  const of = (purpose: Purpose) => extra.filter((d) => d.event.purpose === purpose).length;
  return {
    deliveries: [...deliveries, ...extra],
    faults,
    fault_events: {
      poison: of('poison'),
      odd_path: of('odd-path'),
      trickle: of('trickle'),
      burst: of('burst'),
    },
  };
}

/** Waits for the system to drain, then checks it from the outside. */
async function check(
  system: SoakSystem,
  options: SoakOptions,
  { deliveries, faults }: Sent,
  baseline: Map<string, KindFigure>,
  startedAt: Date,
) {
  const acked = deliveries.filter((d) => d.ack).map((d) => d.ack!.webhook_id);
  log(`sent; ${acked.length} acknowledged; draining`);
  await drain(system, acked, options.drainSeconds);
  // Finished records leave Redis RECORD_TTL_SECONDS after their last change.
  await sleep((options.recordTtlSeconds + 5) * 1000);
  const store = await readStore(system.storeUrl, acked);
  // The calls so far: the sweep of `redisGrowth` adds its own.
  const calls = [...system.sandbox.api.calls];
  const found = findings(deliveries, store, calls, ACTION_ATTEMPTS);
  // Dead letters stay in Redis for operators (days, not RECORD_TTL_SECONDS): not what grows.
  const deadLetters = [
    ...new Set(store.actions.flatMap((a) => (a.state === 'failed' ? [a.webhook_id] : []))),
  ];
  const memory = await redisGrowth(
    system,
    baseline,
    acked.length - deadLetters.length,
    deadLetters,
  );
  const judged: Judged = {
    findings: found,
    listening: await listeningAddresses(appPorts(system)),
    ledger: await ledger(system, new Date(startedAt.getTime() - 60_000)),
    redis: {
      ...memory,
      bound: BYTES_PER_WEBHOOK_BOUND,
      dead_letter_webhooks_left_out: deadLetters.length,
    },
    partner_calls_during_outages: outageCalls(faults, calls, {
      targets: PARTNER_TARGETS,
      workers: COUNTS.worker,
      ...WORKER_SETTINGS,
    }),
    unacknowledged: deliveries.length - acked.length,
  };
  return { judged, store };
}

async function soak(options: SoakOptions, teardown: Teardown): Promise<SoakReport> {
  const startedAt = new Date();
  log(`starting the system (Redis appendfsync ${options.fsync})`);
  const system = await startSoakSystem(
    { fsync: options.fsync, recordTtlSeconds: options.recordTtlSeconds, log },
    teardown,
  );
  const { user, password } = system.credentials;
  log(`up: ingress ${system.ingressUrls.join(' ')}`);
  log(`dashboard ${system.dashboardUrl} (user ${user}, password ${password})`);
  try {
    const baseline = await keyBytes(system);
    const sent = await send(system, options);
    const { deliveries } = sent;
    const { judged, store } = await check(system, options, sent, baseline, startedAt);
    const failures = judge(judged);
    // What the stuck and backwards ones show, read while the system still runs.
    const calls = system.sandbox.api.calls;
    failures.push(...(await stuckDetails(system, judged.findings.stuck, calls, store)));
    failures.push(
      ...(await backwardsDetails(
        system,
        judged.findings.order.backwards,
        deliveries,
        calls,
        store,
      )),
    );
    const { unacknowledged, ...checked } = judged;
    return {
      command: `npm run soak -- ${process.argv.slice(2).join(' ')}`.trim(),
      machine: {
        cpus: cpus().length,
        memory_gb: Math.round(totalmem() / 2 ** 30),
        node: process.version,
      },
      options,
      started_at: startedAt.toISOString(),
      finished_at: new Date().toISOString(),
      sent: {
        events: deliveries.length,
        requests: deliveries.reduce((sum, d) => sum + d.tries + d.redeliveries.length, 0),
        unacknowledged,
        fault_events: sent.fault_events,
      },
      faults: sent.faults,
      ...checked,
      ordinary_dead_letters_from_outages: checked.findings.failed.length,
      latency_ms: {
        ack: percentiles(deliveries.flatMap((d) => (d.ack ? [d.ack.latencyMs] : []))),
        action_completion: percentiles(completionTimes(store)),
      },
      passed: failures.length === 0,
      exit_status: failures.length === 0 ? 0 : 1,
      failures,
    };
  } finally {
    await system.stop();
  }
}

let options: SoakOptions;
try {
  options = parseSoakArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
  process.exit(2);
}
const teardown = new Teardown();
let interrupted = false;
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  // The apps run in process groups of their own: Ctrl-C reaches the soak alone, which stops them.
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping the system`);
    void teardown.run().finally(() => process.exit(code));
  });
}
// Once interrupted, the run's end is the clean-up's: what the run does meanwhile does not count.
const ending = new Promise<never>(() => undefined);
const report = await soak(options, teardown).then(
  (done) => (interrupted ? ending : done),
  async (error: unknown) => {
    if (interrupted) return ending;
    // A system that failed to start has not reached the run's own clean-up.
    await teardown.run();
    throw error;
  },
);
process.stdout.write(`${table(report)}\n`);
if (options.report) await writeFile(options.report, `${JSON.stringify(report, null, 2)}\n`);
process.exit(report.exit_status);
