// A partner outage as a sender sees it: `npm run send -- quote --wait` against the sandbox told
// to fail for a while says the actions are held, then prints them completed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

let system: RunningSystem;
beforeAll(async () => {
  system = await startSystem({ CIRCUIT_FAILURE_THRESHOLD: '3', CIRCUIT_PROBE_INTERVAL_MS: '1000' });
});
afterAll(async () => {
  await system.stop();
});

describe('the sandbox partner API told to fail for 10 seconds', { timeout: 60_000 }, () => {
  it('`send --wait` reports the held actions, then the outcome with every action completed', async () => {
    const told = await fetch(`${system.url.api}/__sandbox/failures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 503, pathPattern: '.*', forSeconds: 10 }),
    });
    expect(told.status).toBe(201);
    const { code, lines, output } = await system.send('quote', '--status', 'approved', '--wait');
    expect(code).toBe(0);
    const ack = acknowledgementSchema.parse(lines[0]);
    expect(output).toMatch(
      new RegExp(`${ack.webhook_id} \\w+: held \\(its partner target's circuit is open`),
    );
    const outcome = lines[1] as WebhookOutcome;
    expect(outcome.state).toBe('completed');
    for (const action of outcome.actions) {
      expect(action).toMatchObject({ state: 'completed', held: null, last_error: null });
    }
    // npm start's readable log: each transition on one line, the target (it has a space) quoted.
    expect(system.run.output).toMatch(
      /worker +warn +circuit opened: .+ target="http:\/\/127\.0\.0\.1:\d+ partner\/partner-webhooks" consecutive_failures=3/,
    );
    expect(system.run.output).toMatch(/worker +info +circuit closed: .+ target="[^"]+"/);
    // The worker's metric shows the circuit closed again.
    const metrics = await (await fetch(`${system.url.worker}/metrics`)).text();
    expect(metrics).toMatch(/^partner_circuit_open\{target="[^"]+"\} 0$/m);
    expect(metrics).toMatch(/^partner_circuit_changes_total\{target="[^"]+",change="opened"\} 1$/m);
  });
});
