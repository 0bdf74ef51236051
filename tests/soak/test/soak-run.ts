// `npm run soak` as the tests run it: a process of its own, its report read back.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildRun, testDatabaseUrl } from '@pw/test-utils';
import type { SoakReport } from '../src/report.js';

/** Starts the soak with `args`, against the tests' PostgreSQL. */
export const startSoak = (args: string[], env: Record<string, string> = {}): ChildRun =>
  ChildRun.start(
    [process.execPath, '--import', 'tsx', 'tests/soak/src/main.ts', ...args],
    { DATABASE_URL: testDatabaseUrl(), ...env },
    { name: 'soak', killAfterMs: 60_000 },
  );

/** Runs the soak with `args` to its end: its exit code, its output and its report. */
export async function soakToEnd(args: string[]) {
  const dir = await mkdtemp(join(tmpdir(), 'pw-soak-test-'));
  try {
    const file = join(dir, 'report.json');
    const run = startSoak([...args, '--report', file]);
    const code = await run.exited;
    const report = await readFile(file, 'utf8').then(
      (text) => JSON.parse(text) as SoakReport,
      () => undefined,
    );
    return { code, output: run.output, report };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
