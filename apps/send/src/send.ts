import { parseArgs } from 'node:util';
import { EVENT_KINDS, eventDefinitionByKind, sampleEvent } from '@pw/shared/events';
import { isFinished } from '@pw/shared/outcomes';
import { signEvent } from '@pw/shared/signing';
import type { EventKind } from '@pw/shared/events';
import type { WebhookOutcome } from '@pw/shared/outcomes';

export const USAGE =
  'usage: npm run send -- <quote|contract|sales> [--status S] [--url U] [--count N] [--wait] [--timeout SECONDS] [--invalid FIELD]';

export interface SendOptions {
  kind: EventKind;
  status?: string;
  /** The ingress base address (`http://host:port`) or a full endpoint address. */
  url: string;
  count: number;
  wait: boolean;
  /** How long `--wait` waits for the outcome, in seconds. */
  timeoutSeconds: number;
  /**
   * A field (dotted path, `product.price_with_taxes`) set to `true`, a value no field of any event
   * takes, before the event is signed: an authentic event that fails its schema (quarantined).
   */
  invalid?: string;
}

/** Reads the command line; throws an Error whose message is meant for the user. */
export function parseSendArgs(argv: readonly string[], defaultBaseUrl: string): SendOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      status: { type: 'string' },
      url: { type: 'string' },
      count: { type: 'string', default: '1' },
      wait: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '300' },
      invalid: { type: 'string' },
    },
  });
  const kind = positionals[0];
  if (positionals.length !== 1 || !EVENT_KINDS.includes(kind as EventKind)) {
    throw new Error(USAGE);
  }
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 1)
    throw new Error('--count must be a whole number of at least 1');
  if (!(Number(values.timeout) > 0)) throw new Error('--timeout must be a number of seconds');
  if (values.invalid !== undefined && !/^[\w-]+(\.[\w-]+)*$/.test(values.invalid)) {
    throw new Error(
      '--invalid must name a field, as a dotted path such as product.price_with_taxes',
    );
  }
  return {
    kind: kind as EventKind,
    status: values.status,
    url: values.url ?? defaultBaseUrl,
    count,
    wait: values.wait,
    timeoutSeconds: Number(values.timeout),
    ...(values.invalid !== undefined ? { invalid: values.invalid } : {}),
  };
}

/** The endpoint to post to: `url` itself when it names a path, else the kind's endpoint under it. */
export function endpointFor(url: string, kind: EventKind): string {
  const parsed = new URL(url);
  if (parsed.pathname === '/' || parsed.pathname === '') {
    return new URL(eventDefinitionByKind(kind).path, parsed).toString();
  }
  return parsed.toString();
}

export interface SendResult {
  status: number;
  body: unknown;
  /** The event's entity id (`Q-…`) and customer id: what an operator searches the console for. */
  entityId: string;
  customerId: string;
}

/** Builds `count` distinct sample events, signs each canonically with `secret`, posts them in order. */
export async function sendEvents(options: SendOptions, secret: string): Promise<SendResult[]> {
  const endpoint = endpointFor(options.url, options.kind);
  const results: SendResult[] = [];
  for (let i = 0; i < options.count; i++) {
    const sample = sampleEvent(options.kind, { status: options.status });
    if (options.invalid) setField(sample, options.invalid, true);
    const event = signEvent(sample, secret);
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's error page, say): print it as text.
    }
    results.push({
      status: response.status,
      body,
      entityId: String(event[eventDefinitionByKind(options.kind).entityIdField]),
      customerId: String(event.customer_id),
    });
  }
  return results;
}

/** Sets the field at a dotted path, making the objects on its way. */
function setField(event: Record<string, unknown>, path: string, value: unknown): void {
  const steps = path.split('.');
  const last = steps.pop()!;
  let target = event;
  for (const step of steps) {
    const next = target[step];
    target = (typeof next === 'object' && next !== null ? next : (target[step] = {})) as Record<
      string,
      unknown
    >;
  }
  target[last] = value;
}

/** True for an answer the send succeeded with: 200, or 202 for an event made invalid on purpose. */
export const sendSucceeded = (result: SendResult, options: SendOptions): boolean =>
  result.status === 200 || (options.invalid !== undefined && result.status === 202);

/**
 * The wait's condition (every action finished), which also writes a line to `out` the first time
 * each action is seen held (`held: circuit_open`), so a sender sees why nothing happens yet.
 */
export function reportingHeld(out: { write(text: string): unknown }) {
  const reported = new Set<string>();
  return (outcome: WebhookOutcome): boolean => {
    for (const action of outcome.actions) {
      if (action.held === 'circuit_open' && !reported.has(action.name)) {
        reported.add(action.name);
        out.write(
          `${outcome.webhook_id} ${action.name}: held (its partner target's circuit is open; ` +
            `no attempt is spent, it runs once the target answers)${action.last_error ? `; last error: ${action.last_error}` : ''}\n`,
        );
      }
    }
    return isFinished(outcome);
  };
}
