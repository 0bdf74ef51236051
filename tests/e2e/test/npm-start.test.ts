// The README's first run, as a newcomer does it: `npm start`, then `npm run send -- … --wait`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { freePort } from '@pw/test-utils';
import type { ChildRun } from '@pw/test-utils';
import { startNpmStart } from './system.js';
import type { RunningSystem } from './system.js';

let system: RunningSystem<ChildRun>;
let dataDir: string;
beforeAll(async () => {
  // No DATABASE_URL, as on a newcomer's machine: npm start runs an embedded PostgreSQL (here on a
  // port and in a folder of this test's own).
  dataDir = await mkdtemp(join(tmpdir(), 'pw-npm-start-'));
  system = await startNpmStart({
    DATABASE_URL: '',
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    EMBEDDED_POSTGRES_DIR: dataDir,
  });
}, 120_000);
afterAll(async () => {
  await system.stop();
  await rm(dataDir, { recursive: true, force: true });
});

// The describes below run in this order on one `npm start`; the last one stops it.
describe('npm start with nothing configured', () => {
  it('says it uses the sandbox for the identity provider and the partner API, and where the console and board are', () => {
    expect(system.run.output).toContain('AUTH_URL is unset: using the sandbox identity provider');
    expect(system.run.output).toContain('API_BASE_URL is unset: using the sandbox partner API');
    expect(system.run.output).toContain(
      `console: ${system.url.dashboard}/  queue board: ${system.url.dashboard}/admin/queues`,
    );
    expect(system.run.output).toContain(
      'DATABASE_URL is unset: starting an embedded PostgreSQL for the record store',
    );
    expect(system.run.output).toContain(
      'the apps connect to it as partner_webhooks (not a superuser) with a password made up for this run',
    );
  });

  it('`npm run send -- quote --status approved --wait`: an ack, then all three actions completed', async () => {
    const { code, lines, output } = await system.send('quote', '--status', 'approved', '--wait');
    expect(code).toBe(0);
    // What to search the console for, on stderr (stdout stays JSON lines).
    expect(output).toMatch(/^sent quote Q-\S+ \(customer C-\S+\): 200$/m);
    const ack = acknowledgementSchema.parse(lines[0]);
    const outcome = lines[1] as WebhookOutcome;
    expect(outcome.webhook_id).toBe(ack.webhook_id);
    expect(outcome.state).toBe('completed');
    expect(outcome.actions.map((action) => [action.name, action.state])).toEqual([
      ['notify_customer', 'completed'],
      ['update_sales_opportunity', 'completed'],
      ['lock_price', 'completed'],
    ]);
    const calls = (await (await fetch(`${system.url.api}/__sandbox/calls`)).json()) as {
      headers: Record<string, string>;
    }[];
    const keys = calls
      .map((call) => call.headers['idempotency-key'])
      .filter((key) => key?.startsWith(ack.webhook_id));
    expect(keys.sort()).toEqual(
      ack.actions_triggered.map((action) => `${ack.webhook_id}:${action}`).sort(),
    );
    // The embedded record store has it too: searchable by its quote id, with its history.
    const quoteId = String((await system.outcome(ack.webhook_id, () => true)).entity_id);
    const found = await system.poll(
      `/api/webhooks?entity_id=${encodeURIComponent(quoteId)}`,
      (body: { webhooks: { webhook_id: string; state: string }[] }) =>
        body.webhooks[0]?.state === 'completed',
    );
    expect(found.webhooks.map((webhook) => webhook.webhook_id)).toEqual([ack.webhook_id]);
  });
});

describe('npm start: what reaches the partner and the log', () => {
  it("with tracing off, none of a sender's trace headers reaches the partner", async () => {
    const response = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        tracestate: 'sender=opaque-state',
        baggage: 'user.id=alice',
      },
      body: JSON.stringify(
        signEvent(
          sampleEvent('quote', { id: 'sender-traced', status: 'approved' }),
          DEV_WEBHOOK_SECRET,
        ),
      ),
    });
    const ack = acknowledgementSchema.parse(await response.json());
    await system.outcome(ack.webhook_id, (outcome) => outcome.state === 'completed');
    const calls = (await (await fetch(`${system.url.api}/__sandbox/calls`)).json()) as {
      headers: Record<string, string>;
    }[];
    const webhookCalls = calls.filter((call) =>
      call.headers['idempotency-key']?.startsWith(`${ack.webhook_id}:`),
    );
    expect(webhookCalls).toHaveLength(ack.actions_triggered.length);
    for (const call of webhookCalls) {
      expect(Object.keys(call.headers).sort()).toEqual(['authorization', 'idempotency-key']);
    }
  });

  it('a logged value with CR/LF, a bidi override or a blank-looking character is printed escaped: no forged or rewritten log line', async () => {
    // An entity id may hold a bidi override (not a control character): U+202E would print the
    // rest of the line right to left, U+2066 isolate what follows; U+2800 and U+3164 print as
    // blanks, so that one value would read as two fields.
    const id = 'Q-bidi\u202edetpecca\u2066\u2800x\u3164';
    // A partner's plain-text error page may hold anything, CR/LF and terminal escapes included.
    const forged = '09:00:00 worker    info  FORGED action completed';
    const failed = await fetch(`${system.url.api}/__sandbox/failures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        status: 400,
        pathPattern: '/notifications$',
        carrying: id,
        body: `refused\r\n${forged}\n\u001b[2J\u202e`,
      }),
    });
    expect(failed.status).toBe(201);
    const event = signEvent({ ...sampleEvent('quote'), quote_id: id }, DEV_WEBHOOK_SECRET);
    const response = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
    });
    expect(response.status).toBe(200);
    // Each value is printed JSON-quoted, escapes and all, on the line of the message that logs it.
    await system.run.printed('"Q-bidi\\u202edetpecca\\u2066\\u2800x\\u3164"');
    await system.run.printed('refused\\r\\n09:00:00 worker');
    const lines = system.run.output.split(/\r?\n/);
    expect(lines.filter((line) => line.startsWith('09:00:00 worker'))).toEqual([]);
    expect(system.run.output).not.toContain('\u001b[2J');
    expect(system.run.output).not.toMatch(/[\u202e\u2066\u2800\u3164]/);
    expect(system.run.output).toContain('FORGED action completed\\n\\u001b[2J\\u202e');
  });
});

describe('npm start stopped', () => {
  it('Ctrl-C stops everything with exit code 0, and no secret was logged', async () => {
    // A terminal's Ctrl-C reaches the whole process group: the apps and the embedded PostgreSQL
    // get it as npm start does, and may stop before it asks them to.
    expect(await system.run.stop('SIGINT', 30_000, true)).toBe(0);
    expect(system.run.output).toContain('stopped');
    expect(system.run.output).not.toContain('sandbox-secret');
    expect(system.run.output).not.toContain('dev-secret');
    // Nor the embedded PostgreSQL's password, nor any connection string holding one.
    expect(system.run.output).not.toMatch(/postgres(ql)?:\/\/[^:/\s]+:[^@\s]+@/);
  });
});
