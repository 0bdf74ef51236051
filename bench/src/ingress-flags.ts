// `npm run bench:ingress-flags`: what the ingress's V8 heap flags cost and save. One ingress process
// at a time, driven as fast as it answers (as in the bench's ingress phase), under each set of
// flags in turn, in interleaved rounds: CPU per accepted webhook (user and system time from /proc,
// less noisy than a rate on a shared machine), accepted/s and peak RSS, as medians and ranges.
import { INGRESS_NODE_FLAGS } from '@pw/shared/runtime';
import { BenchRun } from './bench-run.js';
import { measure } from './measure.js';
import { readOptions } from './options.js';
import { RssSampler, treeCpuMs } from './process-usage.js';
import { buildApps, startIngress, whileUp } from './processes.js';
import { median } from './results.js';

/** The flag sets compared: as shipped, V8's defaults, and 4 MB semi-spaces (less RSS, more CPU). */
const FLAG_SETS: Record<string, readonly string[]> = {
  shipped: INGRESS_NODE_FLAGS,
  'v8 defaults': [],
  'old 128, semi 4': ['--max-old-space-size=128', '--max-semi-space-size=4'],
};

interface Measure {
  cpuMsPerWebhook: number;
  acceptedPerSecond: number;
  rssMb: number;
}

const options = readOptions();
const bench = new BenchRun(options);
bench.cleanUpOnSignals();

/** One ingress under `flags`: warmed up, then measured. */
async function measureFlags(flags: readonly string[]): Promise<Measure> {
  const ingress = await startIngress(bench, options.redisUrl, 1, {}, [], flags);
  try {
    await whileUp(measure(bench, ingress.url), ingress.child);
    const sampler = new RssSampler({ ingress: ingress.child.pid });
    const cpuBefore = treeCpuMs(ingress.child.pid);
    const load = await whileUp(measure(bench, ingress.url, { warmup: false }), ingress.child);
    const cpuMs = treeCpuMs(ingress.child.pid) - cpuBefore;
    const rssMb = sampler.stop().ingress ?? 0;
    const accepted = Math.max(1, load.acceptedPerSecond * options.duration);
    return { cpuMsPerWebhook: cpuMs / accepted, acceptedPerSecond: load.acceptedPerSecond, rssMb };
  } finally {
    await ingress.child.stop();
  }
}

/** A measure's median over the rounds, and its range. */
function column(all: Measure[], key: keyof Measure, digits: number): string {
  const values = all.map((one) => one[key]);
  const text = (n: number) => n.toFixed(digits);
  return `${text(median(values))} (${text(Math.min(...values))} - ${text(Math.max(...values))})`;
}

/** One line of the table: a flag set's measures. */
function row(name: string, all: Measure[]): string {
  const cpu = column(all, 'cpuMsPerWebhook', 3);
  const rate = column(all, 'acceptedPerSecond', 0);
  // A space after each column even when a figure outgrows it (a slow machine's CPU per webhook).
  return `${name.padEnd(17)} ${cpu.padEnd(23)} ${rate.padEnd(23)} ${column(all, 'rssMb', 0)}`;
}

await bench.runToEnd(async () => {
  buildApps(bench);
  const measures = new Map<string, Measure[]>();
  for (let round = 1; round <= options.rounds; round++) {
    for (const [name, flags] of Object.entries(FLAG_SETS)) {
      bench.log(`round ${round}: ingress with ${name} (${flags.join(' ') || 'no flags'})`);
      const one = await measureFlags(flags);
      measures.set(name, [...(measures.get(name) ?? []), one]);
    }
  }
  console.log(
    `ingress V8 flags, ${options.rounds} rounds of ${options.duration} s, medians (ranges):`,
  );
  console.log(
    `${'flags'.padEnd(18)}${'CPU ms/webhook'.padEnd(24)}${'accepted/s'.padEnd(24)}peak RSS MB`,
  );
  for (const [name, all] of measures) console.log(row(name, all));
});
