import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, errorBodySchema, EVENT_REGISTRY } from '@pw/shared/events';
import { openApiDocument } from '@pw/shared/openapi';
import { jobCount, postJson, startHarness } from './harness.js';
import type { Harness } from './harness.js';

// What a sender reads in the served document: each endpoint's examples and their answers.
const examples = z.record(z.string(), z.object({ value: z.record(z.string(), z.unknown()) }));
const servedDocument = z.object({
  openapi: z.literal('3.1.0'),
  paths: z.record(
    z.string(),
    z.object({
      post: z
        .object({
          requestBody: z.object({
            content: z.object({ 'application/json': z.object({ examples }) }),
          }),
          responses: z.object({
            '200': z.object({ content: z.object({ 'application/json': z.object({ examples }) }) }),
          }),
        })
        .optional(),
    }),
  ),
});

let harness: Harness;
/** The ingress's clock: set to each example's own time, so its fixed timestamp is fresh. */
const clock = { ms: Date.now() };
beforeAll(async () => {
  // The examples are signed with the development secret, which a dev ingress verifies with.
  harness = await startHarness({
    settings: { webhookSecrets: [DEV_WEBHOOK_SECRET] },
    now: () => clock.ms,
  });
});
afterAll(async () => {
  await harness.close();
});

const post = (path: string, body: unknown) => postJson(harness.app, path, body);

describe('GET /openapi.json', () => {
  it('serves the OpenAPI 3.1 document written from the live schemas, without credentials', async () => {
    const response = await request(harness.app).get('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual(openApiDocument());
  });

  it('every example event in it is accepted by the ingress with the actions it documents', async () => {
    const served = servedDocument.parse((await request(harness.app).get('/openapi.json')).body);
    let posted = 0;
    for (const definition of Object.values(EVENT_REGISTRY)) {
      const operation = served.paths[definition.path]?.post;
      expect(operation, `${definition.path} is documented`).toBeDefined();
      const requests = operation!.requestBody.content['application/json'].examples;
      const answers = operation!.responses['200'].content['application/json'].examples;
      for (const [name, { value: event }] of Object.entries(requests)) {
        clock.ms = Date.parse(String(event.timestamp)) + 60_000;
        const response = await post(definition.path, event);
        expect(response.status, `${definition.path} ${name}`).toBe(200);
        const ack = acknowledgementSchema.parse(response.body);
        expect(ack.actions_triggered).toEqual(answers[name]?.value.actions_triggered);
        posted += 1;
        expect(await jobCount(harness)).toBe(posted);
      }
    }
    expect(posted).toBeGreaterThanOrEqual(Object.keys(EVENT_REGISTRY).length * 2);
  });

  it('an example whose content was changed after signing is refused with 401, as documented', async () => {
    const served = servedDocument.parse((await request(harness.app).get('/openapi.json')).body);
    const before = await jobCount(harness);
    for (const definition of Object.values(EVENT_REGISTRY)) {
      const requests = served.paths[definition.path]!.post!.requestBody.content['application/json'];
      const [event] = Object.values(requests.examples).map((example) => example.value);
      const response = await post(definition.path, { ...event, customer_id: 'someone-else' });
      expect(response.status).toBe(401);
      expect(errorBodySchema.parse(response.body).error.code).toBe('invalid_signature');
    }
    expect(await jobCount(harness)).toBe(before);
  });
});

it('an example posted once its timestamp has left the freshness window is refused with 422 timestamp_out_of_range', async () => {
  const served = servedDocument.parse((await request(harness.app).get('/openapi.json')).body);
  const definition = Object.values(EVENT_REGISTRY)[0]!;
  const requests = served.paths[definition.path]!.post!.requestBody.content['application/json'];
  const [event] = Object.values(requests.examples).map((example) => example.value);
  clock.ms = Date.parse(String(event!.timestamp)) + 8 * 86_400_000;
  const response = await post(definition.path, event);
  expect(response.status).toBe(422);
  expect(errorBodySchema.parse(response.body).error.code).toBe('timestamp_out_of_range');
});
