// `npm run docs`: writes the tables of docs/ that restate code (variables, error codes, failure
// codes, actions) and the one run of each bench the performance pages show (from its results file
// in docs/runs/), between their markers; `npm run docs -- --check` writes nothing and exits 1
// when a committed page differs from what the code says (the test suite runs it).
// `npm run docs -- --pictures` also takes the pictures of docs/ (the console's pages, a trace's
// waterfall) by running the end-to-end tests that draw them, asked to write them.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import type { z } from 'zod';
import { ACTION_NAMES, ACTION_SPECS } from '@pw/shared/actions';
import { startVariables } from '@pw/shared/config';
import { ERROR_CODES } from '@pw/shared/events';
import type { Condition } from '@pw/shared/rules';
import { FAILURE_CODES } from '@pw/shared/runtime';
import { dashboardVariables } from '../apps/dashboard/src/config.js';
import { ingressVariables } from '../apps/ingress/src/config.js';
import { recorderVariables } from '../apps/recorder/src/config.js';
import { sendVariables } from '../apps/send/src/config.js';
import { workerVariables } from '../apps/worker/src/config.js';
import { formatResults } from '../bench/src/redis-cost/report.js';
import type { RedisCostResults } from '../bench/src/redis-cost/report.js';
import { formatTable } from '../bench/src/report.js';
import type { Results } from '../bench/src/results.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const APPS = {
  ingress: ingressVariables(false),
  worker: workerVariables(false),
  dashboard: dashboardVariables(false),
  recorder: recorderVariables,
  send: sendVariables(false),
} satisfies Record<string, Record<string, z.ZodType>>;

const cell = (text: string) => text.replaceAll('|', '\\|');

/** The default a variable's schema gives when it is unset, or the one its metadata names. */
function defaultOf(schema: z.ZodType): string {
  const named = schema.meta()?.default;
  if (typeof named === 'string') return named;
  const parsed = schema.safeParse(undefined);
  if (!parsed.success) return 'required';
  if (parsed.data === undefined) return 'unset';
  return `\`${JSON.stringify(parsed.data).replace(/^"|"$/g, '')}\``;
}

function variablesTable(): string {
  const rows = new Map<string, { schema: z.ZodType; apps: string[] }>();
  for (const [app, variables] of Object.entries(APPS)) {
    for (const [name, schema] of Object.entries<z.ZodType>(variables)) {
      const row = rows.get(name);
      if (row) row.apps.push(app);
      else rows.set(name, { schema, apps: [app] });
    }
  }
  const lines = ['| variable | default | used by | meaning |', '| --- | --- | --- | --- |'];
  for (const [name, { schema, apps }] of rows) {
    const meaning = schema.meta()?.description;
    if (!meaning) throw new Error(`${name} has no description: add .meta({ description }) to it`);
    const usedBy = Object.keys(APPS).every((app) => apps.includes(app)) ? 'all' : apps.join(', ');
    lines.push(`| \`${name}\` | ${cell(defaultOf(schema))} | ${usedBy} | ${cell(meaning)} |`);
  }
  // Read by `npm start` itself (scripts/start.ts), outside any app's schema.
  for (const [name, schema] of Object.entries<z.ZodType>(startVariables)) {
    const meaning = schema.meta()?.description ?? '';
    lines.push(`| \`${name}\` | ${cell(defaultOf(schema))} | \`npm start\` | ${cell(meaning)} |`);
  }
  return lines.join('\n');
}

function errorCodesTable(): string {
  const lines = ['| status | `error.code` | when |', '| --- | --- | --- |'];
  const codes = Object.entries(ERROR_CODES).sort(([, a], [, b]) => a.status - b.status);
  for (const [code, { status, when }] of codes) {
    lines.push(`| ${status} | \`${code}\` | ${cell(when)} |`);
  }
  return lines.join('\n');
}

function failureCodesTable(): string {
  const lines = ['| code | meaning |', '| --- | --- |'];
  for (const [code, meaning] of Object.entries(FAILURE_CODES)) {
    lines.push(`| \`${code}\` | ${cell(meaning)} |`);
  }
  return lines.join('\n');
}

/** A routing-rule condition as a reader says it. */
function sayCondition(condition: Condition): string {
  if ('exists' in condition)
    return `\`${condition.path}\` ${condition.exists ? 'is set' : 'is unset'}`;
  if ('in' in condition) {
    return `\`${condition.path}\` is ${condition.in.map((value) => `\`${String(value)}\``).join(' or ')}`;
  }
  return `\`${condition.path}\` is \`${String(condition.equals)}\``;
}

function actionsTable(): string {
  const lines = [
    '| action | event | default call | default rule | changes state |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const name of ACTION_NAMES) {
    const { eventType, call, when, changesState } = ACTION_SPECS[name];
    const rule = when.length === 0 ? 'always' : when.map(sayCondition).join(' and ');
    lines.push(
      `| \`${name}\` | \`${eventType}\` | \`${call.method} ${call.path}\` | ${cell(rule)} | ${changesState ? 'yes' : 'no'} |`,
    );
  }
  return lines.join('\n');
}

/** A results file of one run, committed beside the pages that show it (`docs/runs/`). */
const run = <T>(file: string): T =>
  JSON.parse(readFileSync(`${root}/docs/runs/${file}`, 'utf8')) as T;

/** The one run of `npm run bench` the performance page shows, from its results file. */
const benchRun = () => ['```', formatTable(run<Results>('bench.json')).trim(), '```'].join('\n');

/** The one run of `npm run bench:redis-cost` the Redis cost page shows, from its results file. */
const redisCostRun = () => formatResults(run<RedisCostResults>('redis-cost.json'));

/** Each generated section: the page it is on and its contents. */
const SECTIONS = {
  variables: { file: 'docs/configuration.md', write: variablesTable },
  'error-codes': { file: 'docs/webhook-api.md', write: errorCodesTable },
  'failure-codes': { file: 'docs/operations.md', write: failureCodesTable },
  actions: { file: 'docs/architecture.md', write: actionsTable },
  'bench-run': { file: 'docs/performance.md', write: benchRun },
  'redis-cost-run': { file: 'docs/redis-cost.md', write: redisCostRun },
} as const;

const marker = (name: string) =>
  new RegExp(
    `(<!-- generated by npm run docs: ${name} -->)[\\s\\S]*?(<!-- end of generated section -->)`,
  );

/** Every page with generated sections, as the code says it should read. */
async function generatedPages(): Promise<Map<string, string>> {
  const pages = new Map<string, string>();
  for (const [name, { file, write }] of Object.entries(SECTIONS)) {
    const text = pages.get(file) ?? readFileSync(`${root}/${file}`, 'utf8');
    if (!marker(name).test(text)) throw new Error(`${file} has no markers for "${name}"`);
    pages.set(
      file,
      text.replace(
        marker(name),
        (_, open: string, close: string) => `${open}\n\n${write()}\n\n${close}`,
      ),
    );
  }
  const options = await prettier.resolveConfig(`${root}/README.md`);
  for (const [file, text] of pages) {
    pages.set(file, await prettier.format(text, { ...options, parser: 'markdown' }));
  }
  return pages;
}

const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [file, text] of await generatedPages()) {
  if (readFileSync(`${root}/${file}`, 'utf8') === text) continue;
  if (check) stale.push(file);
  else writeFileSync(`${root}/${file}`, text);
}
if (stale.length > 0) {
  console.error(`docs: ${stale.join(', ')} differ from the code: run \`npm run docs\``);
  process.exit(1);
}

if (process.argv.includes('--pictures')) {
  const run = spawnSync('npx', ['vitest', 'run', 'test/console.test.ts', 'test/tracing.test.ts'], {
    cwd: `${root}/tests/e2e`,
    stdio: 'inherit',
    env: { ...process.env, PW_WRITE_PICTURES: '1' },
  });
  process.exit(run.status ?? 1);
}
