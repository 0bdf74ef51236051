import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, eventDefinitionByKind, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import { signedEvent, TEST_SECRET } from '@pw/test-utils';
import { parseWebhook } from '../src/parse-webhook.js';
import type { ParseSettings } from '../src/parse-webhook.js';
import { JSON_SHAPE_LIMITS } from '../src/screen-json.js';
import { jobCount, startHarness } from './harness.js';
import type { Harness } from './harness.js';

const path = '/webhooks/quote-status';
const MAX_BODY_BYTES = 262_144;
let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness.close();
});

const postRaw = (body: string | Buffer) =>
  request(harness.app).post(path).set('content-type', 'application/json').send(body);

async function expectRefused(sent: string | Buffer, status: number, code: string) {
  const response = await postRaw(sent);
  expect(response.status).toBe(status);
  const body = errorBodySchema.parse(response.body);
  expect(body.received).toBe(false);
  expect(body.error.code).toBe(code);
  expect(await jobCount(harness)).toBe(0);
  return body;
}

/** `{"k0":0,"k1":1,…}`: one object and `members` numbers. */
const manyMembers = (members: number) =>
  `{${Array.from({ length: members }, (_, i) => `"k${i}":${i}`).join(',')}}`;

const nested = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

/** A flood the byte scan refuses unparsed: as many small keys as fit under MAX_BODY_BYTES (about 28,000). */
function smallKeysFlood(): string {
  const members: string[] = [];
  let size = 2;
  for (let i = 0; size + 12 < MAX_BODY_BYTES - 1; i++) {
    const member = `"k${i}":${i % 10}`;
    members.push(member);
    size += member.length + 1;
  }
  return `{${members.join(',')}}`;
}

/** The costliest unsigned body under the limits: 1,999 long keys filling MAX_BODY_BYTES. */
function longKeysUnderTheLimits(): string {
  const members = JSON_SHAPE_LIMITS.maxValues - 1;
  const keyLength = Math.floor(MAX_BODY_BYTES / members) - 8;
  const body = `{${Array.from({ length: members }, (_, i) => `"${String(i).padStart(keyLength, 'k')}":1`).join(',')}}`;
  expect(body.length).toBeLessThanOrEqual(MAX_BODY_BYTES);
  return body;
}

describe('before the signature is checked, the work a body can cause is bounded', () => {
  it('a flood body of ~28,000 small keys is refused with 413 before it is parsed', async () => {
    const flood = smallKeysFlood();
    expect(flood.length).toBeGreaterThan(250_000);
    const refusal = await expectRefused(flood, 413, 'payload_too_large');
    expect(refusal.error.message).toMatch(/2000 JSON values/);
  });

  it('counts values before parsing: 2,001 values are refused with 413 even where the JSON breaks later', async () => {
    // 1 object + 2,000 members = 2,001 values, then garbage a parser would call a syntax error.
    await expectRefused(`${manyMembers(2000).slice(0, -1)},]]]`, 413, 'payload_too_large');
    // 1 object + 1,999 members = 2,000 values: within the limit, so on to the signature.
    await expectRefused(manyMembers(1999), 401, 'invalid_signature');
  });

  it('refuses nesting deeper than 32 levels with 413, and 1,800 levels too (no 500)', async () => {
    await expectRefused(nested(33), 413, 'payload_too_large');
    await expectRefused(nested(1800), 413, 'payload_too_large');
    await expectRefused(`{"a":${nested(31)}}`, 401, 'invalid_signature');
  });

  it('commas, brackets and escaped quotes inside strings are not counted', async () => {
    const text = `x\\",[{${','.repeat(5000)}`;
    await expectRefused(`{"a":"${text}","b":["${text}"]}`, 401, 'invalid_signature');
  });

  it('an unsigned body of the costliest shape under the limits costs no more CPU than a legitimate event of the same size', () => {
    // CPU time, not wall-clock: the ratio of two workloads measured interleaved in one process.
    const definition = eventDefinitionByKind('quote');
    const settings: ParseSettings = {
      webhookSecrets: [TEST_SECRET],
      signatureMode: 'required',
      maxClockSkewSeconds: 300,
      dedupWindowSeconds: 604_800,
    };
    const legitimate = Buffer.from(
      JSON.stringify(
        signEvent(
          { ...sampleEvent('quote'), note: 'n'.repeat(MAX_BODY_BYTES - 1000) },
          TEST_SECRET,
        ),
      ),
    );
    const attacks = [Buffer.from(smallKeysFlood()), Buffer.from(longKeysUnderTheLimits())];
    expect(() => parseWebhook(legitimate, definition, settings)).not.toThrow();
    const cpuMs = (body: Buffer) => {
      const start = process.cpuUsage();
      for (let i = 0; i < 5; i++) {
        try {
          parseWebhook(body, definition, settings);
        } catch {
          // refused, as expected for the attacks
        }
      }
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 5000;
    };
    const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
    const rounds = { legitimate: [] as number[], attacks: attacks.map(() => [] as number[]) };
    for (let round = 0; round < 9; round++) {
      rounds.legitimate.push(cpuMs(legitimate));
      attacks.forEach((body, index) => rounds.attacks[index]!.push(cpuMs(body)));
    }
    const legitimateMs = median(rounds.legitimate);
    // Parsing the bytes is most of both, so the long keys' body costs about what the legitimate
    // event does (1.02 times in a loaded CI run, where a bound of 1 failed): "no more", with a
    // quarter for what a machine's caches and neighbours move CPU time by.
    for (const samples of rounds.attacks) {
      expect(median(samples)).toBeLessThan(legitimateMs * 1.25);
    }
  });
});

describe('JSON that has no canonical form is refused as invalid JSON, before the signature', () => {
  const withField = (raw: string) => {
    const event = JSON.stringify(signedEvent('quote'));
    return `${event.slice(0, -1)},"extra":${raw}}`;
  };

  it.each([
    ['a lone high surrogate', '"\\ud800"'],
    ['a lone low surrogate', '"abc\\udc00"'],
    ['a number that overflows to Infinity', '1e400'],
    ['a negative overflow', '-1e400'],
    ['a lone surrogate in a key', '{"\\ud800":1}'],
  ])('%s gets 400 invalid_json, not 500', async (_name, raw) => {
    const refusal = await expectRefused(withField(raw), 400, 'invalid_json');
    expect(refusal.error.message).toMatch(/canonical/);
  });

  it('a well-formed surrogate pair is fine', async () => {
    const event = signEvent({ ...sampleEvent('quote'), note: '\ud83d\ude00' }, TEST_SECRET);
    expect((await postRaw(JSON.stringify(event))).status).toBe(200);
  });
});
