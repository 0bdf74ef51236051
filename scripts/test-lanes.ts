// `npm test`'s last step: turbo runs every package's typecheck, lint and test tasks, in three
// lanes side by side (docs/development.md#how-long-the-tests-take). The slowest test suites have a
// lane of their own and start at once: the run lasts at least as long as the slowest, and turbo
// alone would start them in an order of its own. Typecheck and lint have a lane of their own, so
// they never wait for a test; the other suites share the third. The run fails if a lane fails,
// after every lane has finished, so that one run names every failing task.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** The slowest suites, slowest first (the per-package times in docs/development.md). */
export const SLOWEST = ['@pw/e2e', '@pw/worker'];

const lanes: { name: string; args: string[] }[] = [
  {
    name: 'slowest tests',
    args: ['test', ...SLOWEST.map((name) => `--filter=${name}`), '--concurrency=2'],
  },
  { name: 'typecheck and lint', args: ['typecheck', 'lint', '--concurrency=1'] },
  {
    name: 'other tests',
    args: ['test', ...SLOWEST.map((name) => `--filter=!${name}`), '--concurrency=1'],
  },
];

const started = Date.now();
const results = await Promise.all(
  lanes.map(async ({ name, args }) => {
    // --continue: a failing task does not stop its lane's others, so one run names every failure.
    const turbo = spawn('npx', ['turbo', 'run', ...args, '--continue'], { stdio: 'inherit' });
    const [code] = (await once(turbo, 'exit')) as [number | null];
    return { name, code };
  }),
);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
const failed = results.filter((lane) => lane.code !== 0);
console.log(
  failed.length === 0
    ? `npm test: every lane passed in ${minutes} min`
    : `npm test: ${failed.map((lane) => `${lane.name} failed (exit ${lane.code})`).join(', ')}, after ${minutes} min`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
