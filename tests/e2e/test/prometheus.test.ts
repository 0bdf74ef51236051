// A real Prometheus (Debian's `prometheus` binary) scraping npm start's ingress, worker, dashboard
// and recorder every second with the rules of deploy/prometheus: when the partner refuses actions
// for good, the dead-letter alert fires, seen through Prometheus's HTTP API. Also: every metric the
// rules and the Grafana dashboard name is one the apps export.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import { ChildRun, freePort } from '@pw/test-utils';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

const DEPLOY = fileURLToPath(new URL('../../../deploy/', import.meta.url));

let system: RunningSystem;
let prometheus: ChildRun;
let folder: string;
let api: string;

/** Prometheus's answer at `path` once `condition` holds, asked every 250 ms for up to 30 s. */
async function awaitProm<T>(path: string, condition: (data: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  let last: unknown;
  for (;;) {
    const answer = await fetch(`${api}${path}`).catch(() => undefined);
    if (answer?.ok) {
      last = ((await answer.json()) as { data: T }).data;
      if (condition(last as T)) return last as T;
    }
    if (Date.now() > deadline) {
      throw new Error(`${path}: not as awaited in 30 s: ${JSON.stringify(last).slice(0, 2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  system = await startSystem({ ACTION_ATTEMPTS: '1', CIRCUIT_FAILURE_THRESHOLD: '1000' });
  folder = await mkdtemp(join(tmpdir(), 'pw-prometheus-'));
  const port = await freePort();
  api = `http://127.0.0.1:${port}`;
  const target = (url: string) => new URL(url).host;
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: [
      join(DEPLOY, 'prometheus/recording-rules.yml'),
      join(DEPLOY, 'prometheus/alerts.yml'),
    ],
    scrape_configs: [
      { job_name: 'ingress', static_configs: [{ targets: [target(system.url.ingress)] }] },
      { job_name: 'worker', static_configs: [{ targets: [target(system.url.worker)] }] },
      { job_name: 'dashboard', static_configs: [{ targets: [target(system.url.dashboard)] }] },
      { job_name: 'recorder', static_configs: [{ targets: [target(system.url.recorder)] }] },
    ],
  };
  // JSON is YAML: Prometheus reads it as its config file.
  await writeFile(join(folder, 'prometheus.yml'), JSON.stringify(config));
  try {
    prometheus = ChildRun.start(
      [
        'prometheus',
        `--config.file=${join(folder, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(folder, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      {},
      { name: 'prometheus', killAfterMs: 5000 },
    );
  } catch (error) {
    throw new Error('prometheus is not installed: apt-get install prometheus', { cause: error });
  }
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await system?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

interface Target {
  labels: { job: string };
  health: string;
}
interface Alert {
  labels: { alertname: string };
  state: string;
}

describe('a real Prometheus with the shipped rules', { timeout: 90_000 }, () => {
  it('scrapes every app; the dead-letter alert fires once the partner refuses actions for good', async () => {
    const targets = await awaitProm<{ activeTargets: Target[] }>(
      '/api/v1/targets',
      (data) =>
        data.activeTargets.length === 4 && data.activeTargets.every((t) => t.health === 'up'),
    );
    expect(targets.activeTargets.map((t) => t.labels.job).sort()).toEqual([
      'dashboard',
      'ingress',
      'recorder',
      'worker',
    ]);
    // An idle recorder whose store answered is up (the store-down alert stays quiet).
    await awaitProm<{ result: { value: [number, string] }[] }>(
      `/api/v1/query?query=${encodeURIComponent('min(record_store_up)')}`,
      (data) => data.result[0]?.value[1] === '1',
    );
    // The dead letters' gauge is scraped at 0 first: the alert is about it growing.
    await awaitProm<{ result: { value: [number, string] }[] }>(
      `/api/v1/query?query=${encodeURIComponent('pw:dead_letters')}`,
      (data) => data.result[0]?.value[1] === '0',
    );
    const failing = await fetch(`${system.url.api}/__sandbox/failures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 400, pathPattern: '/price-lock', times: 1000 }),
    });
    expect(failing.status).toBe(201);
    for (let n = 0; n < 3; n++) {
      const answer = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          signEvent(sampleEvent('quote', { status: 'approved' }), DEV_WEBHOOK_SECRET),
        ),
      });
      expect(answer.status).toBe(200);
    }
    const alerts = await awaitProm<{ alerts: Alert[] }>('/api/v1/alerts', (data) =>
      data.alerts.some(
        (alert) =>
          alert.labels.alertname === 'PartnerWebhooksDeadLettersGrowing' &&
          alert.state === 'firing',
      ),
    );
    // Nothing else is wrong: no target down, no 5xx, the store up.
    const others = alerts.alerts
      .filter((alert) => alert.labels.alertname !== 'PartnerWebhooksDeadLettersGrowing')
      .map((alert) => alert.labels.alertname);
    expect(others).toEqual([]);
  });
});

describe('the metrics the shipped rules and dashboard query', { timeout: 90_000 }, () => {
  it('every metric the rules and the Grafana dashboard query is exported by the apps', async () => {
    const exported = new Set(['up']);
    for (const url of Object.values(system.url).filter((u) => u !== system.url.api)) {
      const text = await (await fetch(`${url}/metrics`)).text();
      for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        exported.add(name ?? '');
        if (type === 'histogram') {
          for (const part of ['_bucket', '_sum', '_count']) exported.add(`${name}${part}`);
        }
      }
    }
    const rules = ['prometheus/recording-rules.yml', 'prometheus/alerts.yml'];
    const expressions = [
      ...(await Promise.all(rules.map((file) => readFile(join(DEPLOY, file), 'utf8'))))
        .flatMap((text) => [...text.matchAll(/^\s+expr: (>-\n(?:\s{10}.*\n)+|.*)$/gm)])
        .map(([, expr]) => expr ?? ''),
      ...grafanaExpressions(
        JSON.parse(
          await readFile(join(DEPLOY, 'grafana/dashboards/partner-webhooks.json'), 'utf8'),
        ) as Dashboard,
      ),
    ];
    expect(expressions.length).toBeGreaterThan(20);
    const named = new Set(expressions.flatMap(metricNames));
    expect([...named].filter((name) => !exported.has(name))).toEqual([]);
    expect(named.size).toBeGreaterThan(10);
  });
});

interface Dashboard {
  panels: { targets: { expr: string }[] }[];
}

const grafanaExpressions = (dashboard: Dashboard) =>
  dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));

const PROMQL_WORDS = new Set([
  'and',
  'or',
  'unless',
  'offset',
  'bool',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
]);

/**
 * The metric names a PromQL expression reads: what is left once strings, label matchers, ranges,
 * grouping clauses, functions, recording rules (`pw:…`) and keywords are taken out.
 */
function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/([A-Za-z_:][\w:]*)(\s*\()?/g)]
    .filter(([name, , call]) => !call && !name.includes(':') && !PROMQL_WORDS.has(name))
    .map(([name]) => name)
    .filter((name) => !/^\d/.test(name));
}
