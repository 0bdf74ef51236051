import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEV_WEBHOOK_SECRET } from '../config/signing-env.js';
import { acknowledgementSchema } from '../events/acknowledgement.js';
import { ERROR_CODES } from '../events/error-codes.js';
import { EVENT_REGISTRY } from '../events/registry.js';
import { DEFAULT_RULES, selectActions } from '../rules/routing-rules.js';
import { verifyEvent } from '../signing/signature.js';
import { openApiDocument, schemaName } from './openapi-document.js';

type Json = Record<string, unknown>;

// The parts of the document the tests read, checked for their shape on the way in.
const examples = z.record(
  z.string(),
  z.object({ summary: z.string(), value: z.record(z.string(), z.unknown()) }),
);
const refusal = z.object({
  description: z.string(),
  headers: z.record(z.string(), z.unknown()).optional(),
  content: z.object({
    'application/json': z.object({
      schema: z.object({
        properties: z.object({
          error: z.object({
            properties: z.object({ code: z.object({ enum: z.array(z.string()) }) }),
          }),
        }),
      }),
    }),
  }),
});
const webhookOperation = z.object({
  description: z.string(),
  requestBody: z.object({
    content: z.object({
      'application/json': z.object({ schema: z.object({ $ref: z.string() }), examples }),
    }),
  }),
  responses: z
    .object({
      '200': z.object({ content: z.object({ 'application/json': z.object({ examples }) }) }),
      '202': z.object({ content: z.object({ 'application/json': z.object({ examples }) }) }),
    })
    .catchall(refusal),
});
const documentShape = z.object({
  paths: z.record(z.string(), z.object({ post: webhookOperation.optional() })),
  components: z.object({ schemas: z.record(z.string(), z.record(z.string(), z.unknown())) }),
});

const raw = openApiDocument();
const document = documentShape.parse(raw);
const definitions = Object.values(EVENT_REGISTRY);
const operation = (path: string) => {
  const post = document.paths[path]?.post;
  if (!post) throw new Error(`no POST ${path} in the document`);
  return post;
};

/** The request examples of a webhook endpoint, by name. */
const requestExamples = (path: string): [string, Json][] =>
  Object.entries(operation(path).requestBody.content['application/json'].examples).map(
    ([name, example]) => [name, example.value],
  );

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(raw));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every registered event at its path, with its schema and every refusal', () => {
    const webhookPaths = Object.keys(document.paths).filter((path) =>
      path.startsWith('/webhooks/'),
    );
    expect(webhookPaths.sort()).toEqual(definitions.map((definition) => definition.path).sort());
    const statuses = [...new Set(Object.values(ERROR_CODES).map((entry) => entry.status))]
      .filter((status) => status !== 404 && status !== 405)
      .map(String);
    for (const definition of definitions) {
      const post = operation(definition.path);
      expect(post.requestBody.content['application/json'].schema.$ref).toBe(
        `#/components/schemas/${schemaName(definition)}`,
      );
      expect(Object.keys(post.responses).sort()).toEqual(['200', '202', ...statuses].sort());
      // The quarantined example is an acknowledgement that says so, with its problems.
      for (const { value } of Object.values(
        post.responses['202'].content['application/json'].examples,
      )) {
        expect(acknowledgementSchema.parse(value)).toMatchObject({
          quarantined: true,
          actions_triggered: [],
        });
      }
      const refusalOf = (status: string) => refusal.parse(post.responses[status]);
      expect(refusalOf('503').headers?.['Retry-After']).toBeDefined();
      expect(refusalOf('429').headers?.['Retry-After']).toBeDefined();
      const { code } =
        refusalOf('401').content['application/json'].schema.properties.error.properties;
      expect(code.enum).toEqual(['invalid_signature']);
      // The description lists every action the event can set off.
      for (const action of definition.actions) expect(post.description).toContain(`\`${action}\``);
    }
  });

  it.each(definitions.map((definition) => [definition.type, definition] as const))(
    'every %s example validates against the live schema, is signed with the dev secret, and its acknowledgement is what the default rules give',
    (_type, definition) => {
      const examples = requestExamples(definition.path);
      const statuses = examples.map(([, event]) => String(event[definition.statusField]));
      // At least the sample's status and every status a default rule tests.
      expect(examples.length).toBeGreaterThanOrEqual(2);
      expect(new Set(statuses).size).toBe(statuses.length);
      const acks = operation(definition.path).responses['200'].content['application/json'].examples;
      for (const [name, event] of examples) {
        expect(definition.schema.safeParse(event).error?.issues ?? []).toEqual([]);
        expect(verifyEvent(event, [DEV_WEBHOOK_SECRET])).toBe(true);
        const ack = acknowledgementSchema.parse(acks[name]?.value);
        expect(ack.actions_triggered).toEqual(selectActions(definition.type, event, DEFAULT_RULES));
        expect(ack.actions_triggered.length).toBeGreaterThan(0);
      }
    },
  );
});

/** The path of every member of a JSON value, nested ones included. */
function memberPaths(value: unknown, prefix: string[] = []): string[][] {
  const here = prefix.length > 0 ? [prefix] : [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return here;
  return [
    ...here,
    ...Object.entries(value).flatMap(([key, child]) => memberPaths(child, [...prefix, key])),
  ];
}

function withValue(event: Json, path: string[], value: unknown): Json {
  const copy = structuredClone(event);
  let target = copy;
  for (const step of path.slice(0, -1)) target = target[step] as Json;
  if (value === undefined) delete target[path.at(-1)!];
  else target[path.at(-1)!] = value;
  return copy;
}

const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  42,
  1.5,
  true,
  '',
  'x',
  {},
  [],
  '12.5',
  '-3.00',
  '2026-11-21',
  '2026-11-21T10:00:00',
  '2026-11-21T10:00:00+02:00',
  '2026-02-30T10:00:00Z',
];

describe('the JSON Schemas in the document', () => {
  // A JSON Schema validator reading the document must refuse exactly what the ingress refuses.
  const ajv = new Ajv2020({ strict: true, validateFormats: false, allErrors: true });

  it.each(definitions.map((definition) => [definition.type, definition] as const))(
    '%s: accepts and refuses exactly what the live zod schema does',
    (_type, definition) => {
      const validate = ajv.compile(document.components.schemas[schemaName(definition)]!);
      let disagreements: string[] = [];
      let refused = 0;
      for (const [, example] of requestExamples(definition.path)) {
        const variants = [
          example,
          { ...example, unknown_member: { nested: true } },
          ...memberPaths(example).flatMap((path) =>
            REPLACEMENTS.map((value) => withValue(example, path, value)),
          ),
        ];
        for (const variant of variants) {
          const zodAccepts = definition.schema.safeParse(variant).success;
          if (!zodAccepts) refused += 1;
          if (validate(variant) !== zodAccepts) {
            disagreements = [...disagreements, `zod ${zodAccepts}: ${JSON.stringify(variant)}`];
          }
        }
      }
      expect(disagreements).toEqual([]);
      // The variants did exercise refusals, not only acceptances.
      expect(refused).toBeGreaterThan(50);
    },
  );
});
