// `npm run soak`: the whole system under faults on a schedule, then checks from the outside that
// nothing acknowledged was lost and no partner effect happened twice (docs/reliability.md).
// Exits 0 only when every check holds.
import { writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { QUEUE_NAMES } from '@pw/shared';
import { BOUNDED_KINDS, memoryByKind } from '@pw/test-utils';
import type { KindFigure } from '@pw/test-utils';
import { completionTimes, finalCount, findings, percentiles, readStore } from './checks.js';
import type { Findings } from './checks.js';
import { runFaults, schedule } from './faults.js';
import type { FaultRecord } from './faults.js';
import { parseSoakArgs, USAGE } from './options.js';
import type { SoakOptions } from './options.js';
import { QUEUE_PREFIX, startSoakSystem, Teardown } from './system.js';
import type { SoakSystem } from './system.js';
import { drive, plan } from './traffic.js';

/** The bound on Redis's memory per finished webhook (docs/redis-cost.md). */
const BYTES_PER_WEBHOOK_BOUND = 500;

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
 * out (the bench counts them, spread over its 2,000 webhooks a round).
 */
async function redisGrowth(
  system: SoakSystem,
  baseline: Map<string, KindFigure>,
  webhooks: number,
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
  return growth(baseline, await keyBytes(system, sweptIds), webhooks);
}

export interface SoakReport {
  command: string;
  machine: { cpus: number; memory_gb: number; node: string };
  options: SoakOptions;
  started_at: string;
  finished_at: string;
  sent: { events: number; requests: number; unacknowledged: number };
  faults: FaultRecord[];
  findings: Findings;
  ledger: Record<string, unknown>;
  redis: {
    /** Per finished webhook, in the kinds of key that grow with webhooks. */
    bytes_per_webhook: number;
    bound: number;
    /** In all, in the kinds bounded whatever the traffic (`BOUNDED_KINDS`). */
    shared_bytes: number;
    /** Bytes each kind of key grew by over the run. */
    grown_by_kind: Record<string, number>;
  };
  latency_ms: {
    ack: ReturnType<typeof percentiles>;
    action_completion: ReturnType<typeof percentiles>;
  };
  passed: boolean;
  /** The soak's exit status: 0 when every check held, else 1. */
  exit_status: 0 | 1;
  /** Why it did not pass; empty when it did. */
  failures: string[];
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
    const events = plan({ ...options, ingressUrls: system.ingressUrls });
    const sendSeconds = options.webhooks / options.rate;
    const faultPlan = schedule(options.faults, sendSeconds);
    log(`sending ${events.length} events at ${options.rate}/s for ${sendSeconds.toFixed(0)} s`);
    let giveUpAt = Infinity;
    const start = performance.now();
    const [deliveries, faults] = await Promise.all([
      drive(events, { ...options, ingressUrls: system.ingressUrls, giveUpAt: () => giveUpAt }),
      runFaults(system, faultPlan, start, log).then((done) => {
        // Once every fault is over and every event sent, one still unacknowledged a minute later
        // never will be.
        const sendEnd = Date.now() + (start + sendSeconds * 1000 - performance.now());
        giveUpAt = Math.max(Date.now(), sendEnd) + 60_000;
        return done;
      }),
    ]);
    const acked = deliveries.filter((d) => d.ack).map((d) => d.ack!.webhook_id);
    log(`sent; ${acked.length} acknowledged; draining`);
    await drain(system, acked, options.drainSeconds);
    // Finished records leave Redis RECORD_TTL_SECONDS after their last change.
    await sleep((options.recordTtlSeconds + 5) * 1000);
    const store = await readStore(system.storeUrl, acked);
    const found = findings(deliveries, store, system.sandbox.api.calls);
    const memory = await redisGrowth(system, baseline, acked.length);
    const book = await ledger(system, new Date(startedAt.getTime() - 60_000));
    const failures = judge(found, book, memory.bytes_per_webhook, deliveries.length - acked.length);
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
        unacknowledged: deliveries.length - acked.length,
      },
      faults,
      findings: found,
      ledger: book,
      redis: { ...memory, bound: BYTES_PER_WEBHOOK_BOUND },
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

/** What makes the soak fail: each a line. */
function judge(found: Findings, book: { balanced?: boolean }, bytes: number, unacked: number) {
  const failures: string[] = [];
  const count = (what: string, list: readonly unknown[]) => {
    if (list.length > 0) failures.push(`${list.length} ${what}`);
  };
  count('acknowledged webhooks lost (not in the record store)', found.lost);
  count('webhooks stuck (not final after the drain)', found.stuck);
  count('actions failed for good (no fault of the soak is permanent)', found.failed);
  count('partner effects missing', found.effects.missing);
  count('partner effects not expected (skipped or failed actions)', found.effects.unexpected);
  count('duplicate partner effects (one event under two webhook ids)', found.effects.duplicate);
  count('redeliveries answered with another webhook id', found.redelivered_as_new);
  if (found.stale_older < found.older) {
    failures.push(
      `${found.older - found.stale_older} older events not stale though their entity's newer one was acknowledged first`,
    );
  }
  if (book.balanced !== true) failures.push('the ledger does not balance');
  if (bytes >= BYTES_PER_WEBHOOK_BOUND) {
    failures.push(`Redis keeps ${bytes} bytes per webhook (bound ${BYTES_PER_WEBHOOK_BOUND})`);
  }
  if (unacked > 0) failures.push(`${unacked} events never acknowledged`);
  return failures;
}

function table(report: SoakReport): string {
  const f = report.findings;
  const rows: [string, string | number][] = [
    ['events sent', report.sent.events],
    ['requests', report.sent.requests],
    ['acknowledged', f.acknowledged],
    ['never acknowledged', report.sent.unacknowledged],
    ['lost (acknowledged, not stored)', f.lost.length],
    ['stuck (not final)', f.stuck.length],
    ['failed for good', f.failed.length],
    ['quarantined', f.quarantined],
    ['redeliveries sent', f.redeliveries],
    ['redeliveries given a new webhook id', f.redelivered_as_new.length],
    ['older events stale (newer acknowledged first)', `${f.stale_older} of ${f.older}`],
    ['partner effects expected', f.effects.expected],
    ['partner effects applied', f.effects.applied],
    ['partner effects missing', f.effects.missing.length],
    ['partner effects unexpected', f.effects.unexpected.length],
    ['duplicate partner effects', f.effects.duplicate.length],
    ['calls repeating an applied key', f.effects.repeated_calls],
    ['ledger balanced', String(report.ledger.balanced)],
    ['Redis bytes per webhook', `${report.redis.bytes_per_webhook} (bound ${report.redis.bound})`],
    ['Redis bytes in bounded kinds', report.redis.shared_bytes],
    ['ack latency p50/p95/p99/max ms', Object.values(report.latency_ms.ack).join(' / ')],
    [
      'action completion p50/p95/p99/max ms',
      Object.values(report.latency_ms.action_completion).join(' / '),
    ],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const lines = rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`);
  const faults = report.faults.map((fault) => `${fault.started_at}  ${fault.detail}`);
  return [
    ...lines,
    '',
    'faults:',
    ...faults,
    '',
    report.passed ? 'PASSED' : 'FAILED',
    ...report.failures,
  ].join('\n');
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
