import { createHash } from 'node:crypto';
import type {
  ComponentsObject,
  ContentObject,
  ExampleObject,
  HeaderObject,
  HeadersObject,
  OpenAPIObject,
  OperationObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
  ServerObject,
  TagObject,
} from 'openapi3-ts/oas31';
import { z } from 'zod';
import { DEV_WEBHOOK_SECRET } from '../config/signing-env.js';
import { acknowledgementSchema, errorBodySchema } from '../events/acknowledgement.js';
import { ERROR_CODES, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../events/error-codes.js';
import type { ErrorCode } from '../events/error-codes.js';
import { EVENT_REGISTRY } from '../events/registry.js';
import type { EventDefinition } from '../events/registry.js';
import { sampleEvent } from '../events/samples.js';
import { DEFAULT_RULES, selectActions } from '../rules/routing-rules.js';
import type { Condition, RoutingRule } from '../rules/routing-rules.js';
import { canonicalJson } from '../signing/canonical-json.js';
import { signEvent } from '../signing/signature.js';

// The ingress's OpenAPI 3.1 document, written from the live zod schemas, the event registry, the
// default routing rules and the error table: nothing in it is typed by hand but the prose.

// openapi3-ts's types let any member through in three places (a response under `responses`, an
// example, a tag); these narrow them, so that tsc refuses a misspelt member there too.
type Example = Pick<ExampleObject, 'summary' | 'description' | 'value' | 'externalValue'>;
type Tag = Pick<TagObject, 'name' | 'description' | 'externalDocs'>;
interface Operation extends OperationObject {
  responses: Record<string, ResponseObject>;
}
interface PathItem extends PathItemObject {
  get?: Operation;
  post?: Operation;
}
interface Document extends OpenAPIObject {
  tags: Tag[];
  paths: Record<string, PathItem>;
}

/**
 * openapi3-ts's OpenAPIObject written out as a type literal rather than an interface, so that the
 * document still goes wherever any JSON object does (`Record<string, unknown>`).
 */
export type OpenApiDocument = { [K in keyof OpenAPIObject]: OpenAPIObject[K] };

export interface OpenApiOptions {
  /** Where the ingress answers; the default, `/`, is the host that served the document. */
  servers?: ServerObject[];
}

/** The moment every example happened, so the document is the same on every build. */
const EXAMPLE_TIME = new Date('2026-11-21T10:00:00.000Z');
const EXAMPLE_ACK_TIME = new Date(EXAMPLE_TIME.getTime() + 42).toISOString();

/** A zod schema as a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): SchemaObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'throw',
  });
  // zod's JSON Schema type is looser than openapi3-ts's (`items` may be an array, say); what
  // zod writes for these schemas is the 2020-12 dialect OpenAPI 3.1 takes.
  return rest as SchemaObject;
}

/** `quote.status_changed` → `QuoteStatusChanged`. */
export function schemaName(definition: EventDefinition): string {
  return definition.type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

function describeCondition(condition: Condition): string {
  const path = `\`${condition.path}\``;
  if ('exists' in condition) return `${path} is ${condition.exists ? 'present' : 'absent'}`;
  if ('in' in condition) return `${path} is one of ${condition.in.map(String).join(', ')}`;
  return `${path} is ${String(condition.equals)}`;
}

function describeRule(rule: RoutingRule): string {
  const when =
    rule.when.length === 0 ? 'always' : `when ${rule.when.map(describeCondition).join(' and ')}`;
  return `- \`${rule.action}\`: ${when}`;
}

/** The statuses worth an example: the sample's own and every one a default rule tests. */
function exampleStatuses(definition: EventDefinition): string[] {
  const statuses = new Set([String(sampleEvent(definition.kind)[definition.statusField])]);
  for (const rule of DEFAULT_RULES) {
    if (rule.event_type !== definition.type) continue;
    for (const condition of rule.when) {
      if (condition.path !== definition.statusField) continue;
      if ('equals' in condition) statuses.add(String(condition.equals));
      if ('in' in condition) for (const value of condition.in) statuses.add(String(value));
    }
  }
  return [...statuses];
}

interface WebhookExample {
  status: string;
  /** A complete event, signed with the development secret. */
  event: Record<string, unknown>;
  /** The acknowledgement it gets under the default rules. */
  acknowledgement: z.infer<typeof acknowledgementSchema>;
}

/** One signed example per interesting status, with the acknowledgement it gets by default. */
function webhookExamples(definition: EventDefinition): WebhookExample[] {
  return exampleStatuses(definition).map((status, index) => {
    const event = signEvent(
      sampleEvent(definition.kind, { status, now: EXAMPLE_TIME, id: String(1001 + index) }),
      DEV_WEBHOOK_SECRET,
    );
    const digest = createHash('sha256').update(canonicalJson(event)).digest('base64url');
    return {
      status,
      event,
      acknowledgement: {
        received: true,
        processed_at: EXAMPLE_ACK_TIME,
        webhook_id: `wh_${digest.slice(0, 22)}`,
        actions_triggered: selectActions(definition.type, event, DEFAULT_RULES),
      },
    };
  });
}

/** The refusal body with `code` narrowed to the codes a status can carry. */
function refusalSchema(codes: ErrorCode[]): SchemaObject {
  const [first, ...rest] = codes;
  return jsonSchema(
    errorBodySchema.extend({
      error: errorBodySchema.shape.error.extend({ code: z.enum([first!, ...rest]) }),
    }),
    'output',
  );
}

const retryAfter = (description: string): HeadersObject => ({
  'Retry-After': { description, schema: { type: 'integer', minimum: 0 } },
});

const ONLY_WITH_A_LIMIT =
  'Sent on every answer of a webhook endpoint when INGRESS_RATE_LIMIT is above 0.';

/** The IETF draft-6 rate-limit headers the ingress's limiter sets. */
export const RATE_LIMIT_HEADERS: Record<string, HeaderObject> = {
  'RateLimit-Policy': {
    description: `The limit and its window in seconds, such as \`3;w=1\`. ${ONLY_WITH_A_LIMIT}`,
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description: `Requests allowed per window from this sender address. ${ONLY_WITH_A_LIMIT}`,
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': {
    description: `Requests left in the current window. ${ONLY_WITH_A_LIMIT}`,
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Reset': {
    description: `Seconds until the current window ends. ${ONLY_WITH_A_LIMIT}`,
    schema: { type: 'integer', minimum: 0 },
  },
};

const rateLimitHeaderRefs: HeadersObject = Object.fromEntries(
  Object.keys(RATE_LIMIT_HEADERS).map((name): [string, ReferenceObject] => [
    name,
    { $ref: `#/components/headers/${name}` },
  ]),
);

/** What a sender should know of each server-side answer. */
const SERVER_ERRORS: Record<number, string> = {
  503:
    'Retrying is safe: if Redis did take the job after all, the retry is a duplicate and gets ' +
    'the first acknowledgement.',
};

/** The refusals a webhook POST can get, one response per status. */
function refusals(): Record<string, ResponseObject> {
  const codesByStatus = new Map<number, ErrorCode[]>();
  for (const [code, { status }] of Object.entries(ERROR_CODES) as [
    ErrorCode,
    { status: number },
  ][]) {
    // 404 and 405 are about the path and the method, never about a POST to a webhook endpoint.
    if (code === 'not_found' || code === 'method_not_allowed') continue;
    codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, ResponseObject> = {};
  for (const [status, codes] of [...codesByStatus].sort(([a], [b]) => a - b)) {
    const headers: HeadersObject = {
      ...(status === 429 ? retryAfter('Seconds until this sender may send again') : {}),
      ...(status === 503
        ? retryAfter(`Seconds to wait before retrying (${UNAVAILABLE_RETRY_AFTER_SECONDS})`)
        : {}),
      ...rateLimitHeaderRefs,
    };
    const when = codes.map((code) => `\`${code}\` when ${ERROR_CODES[code].when}`).join('; ');
    responses[String(status)] = {
      description:
        status >= 500
          ? `Not confirmed: ${when}. ${SERVER_ERRORS[status] ?? ''}`.trim()
          : `Refused, nothing enqueued: ${when}`,
      headers,
      content: { 'application/json': { schema: refusalSchema(codes) } },
    };
  }
  return responses;
}

/**
 * One webhook endpoint's operation. Long because it is the operation's literal shape, as OpenAPI
 * lays it out; the parts that vary (examples, refusals) are built by the functions above.
 */
function webhookOperation(definition: EventDefinition): Operation {
  const name = schemaName(definition);
  const examples = webhookExamples(definition);
  const rules = DEFAULT_RULES.filter((rule) => rule.event_type === definition.type);
  const exampleKey = (example: WebhookExample) => `status_${example.status}`;
  return {
    operationId: `receive${name}`,
    tags: ['webhooks'],
    summary: `Receive a \`${definition.type}\` event`,
    description: [
      `Validates, verifies and durably enqueues a \`${definition.type}\` event, then acknowledges ` +
        `it with a \`webhook_id\` and the actions it set off. The entity is \`${definition.entityIdField}\`, ` +
        `its new status \`${definition.statusField}\` (matched case-insensitively).`,
      '',
      'Actions under the default routing rules (operators can change them through the dashboard API):',
      ...rules.map(describeRule),
      '',
      'Checks, in order: rate limit (429, when INGRESS_RATE_LIMIT is above 0), content type (415), ' +
        'size (413: bytes, then more than 2,000 JSON values or 32 levels of nesting, before parsing), ' +
        'JSON syntax (400), a JSON value that is not an object (422), signature (401), schema ' +
        '(INVALID_EVENTS=quarantine, the default: kept and answered 202 with its problems; reject: 422), ' +
        'freshness (422 `timestamp_out_of_range`). A repeated delivery of the same event ' +
        '(equal canonical JSON, signature aside) within DEDUP_WINDOW_SECONDS gets the first ' +
        'acknowledgement unchanged and runs no action again. The examples are signed with the ' +
        `development secret \`${DEV_WEBHOOK_SECRET}\`; their \`timestamp\` is fixed ` +
        `(${EXAMPLE_TIME.toISOString()}), so once it is older than DEDUP_WINDOW_SECONDS an ingress ` +
        'refuses them with `timestamp_out_of_range`: set a current time and sign again (`npm run send` does).',
    ].join('\n'),
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: { $ref: `#/components/schemas/${name}` },
          examples: Object.fromEntries(
            examples.map((example): [string, Example] => [
              exampleKey(example),
              {
                summary: `${definition.statusField} ${example.status}`,
                value: example.event,
              },
            ]),
          ),
        },
      },
    },
    responses: {
      '200': {
        description:
          'Durably enqueued (or a duplicate of an event that was): the acknowledgement. It is ' +
          'sent only after Redis accepted the job.',
        headers: rateLimitHeaderRefs,
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/Acknowledgement' },
            examples: Object.fromEntries(
              examples.map((example): [string, Example] => [
                exampleKey(example),
                {
                  summary:
                    `${definition.statusField} ${example.status}: ` +
                    `${example.acknowledgement.actions_triggered.join(', ')} ` +
                    '(webhook_id and processed_at are illustrative)',
                  value: example.acknowledgement,
                },
              ]),
            ),
          },
        },
      },
      '202': quarantinedResponse(),
      ...refusals(),
    },
  };
}

/** The 202 of an authentic event that fails its schema: kept, quarantined. */
function quarantinedResponse() {
  return {
    description:
      'An authentic event (its signature verifies) that fails its schema, with ' +
      'INVALID_EVENTS=quarantine (the default): kept durably, quarantined, before this answer; ' +
      'no action runs until an operator releases it. `problems` names each failing field. A ' +
      'repeat gets the same answer.',
    headers: rateLimitHeaderRefs,
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Acknowledgement' },
        examples: {
          quarantined: {
            summary:
              'a timestamp that does not parse (webhook_id and processed_at are illustrative)',
            value: {
              received: true,
              processed_at: EXAMPLE_TIME.toISOString(),
              webhook_id: 'wh_3q2WBtOxMqD4ZgtOGaxC0A',
              actions_triggered: [],
              quarantined: true,
              problems: [{ path: 'timestamp', message: 'Invalid ISO datetime' }],
            },
          },
        },
      },
    },
  };
}

const statusSchema = (status: string, extra: z.ZodRawShape = {}) =>
  jsonSchema(z.object({ status: z.literal(status), ...extra }), 'output');

const json = (schema: SchemaObject): ContentObject => ({ 'application/json': { schema } });

/** The ingress's paths besides the webhooks: health, readiness, metrics and this document. */
function operationsPaths(): Record<string, PathItem> {
  return {
    '/healthz': {
      get: {
        operationId: 'health',
        tags: ['operations'],
        summary: 'The process is up',
        responses: { '200': { description: 'Up', content: json(statusSchema('ok')) } },
      },
    },
    '/readyz': {
      get: {
        operationId: 'readiness',
        tags: ['operations'],
        summary: 'Redis answers, so webhooks can be accepted',
        responses: {
          '200': { description: 'Ready', content: json(statusSchema('ready')) },
          '503': {
            description: 'Redis is not reachable',
            content: json(statusSchema('unavailable', { reason: z.string() })),
          },
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['operations'],
        summary: 'Prometheus metrics, among them `webhooks_received_total{event_type,outcome}`',
        responses: {
          '200': {
            description: 'Prometheus text exposition format',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openApiDocument',
        tags: ['operations'],
        summary: 'This document',
        responses: {
          '200': { description: 'OpenAPI 3.1', content: json({ type: 'object' }) },
        },
      },
    },
  };
}

/** The schema of each event and of the acknowledgement, and the rate-limit headers. */
function components(definitions: EventDefinition[]): ComponentsObject {
  return {
    schemas: {
      ...Object.fromEntries(
        definitions.map((definition) => [
          schemaName(definition),
          {
            ...jsonSchema(definition.schema, 'input'),
            description: `\`${definition.type}\`, posted to \`${definition.path}\`. Members not listed are kept, not refused.`,
          },
        ]),
      ),
      Acknowledgement: jsonSchema(acknowledgementSchema, 'output'),
    },
    headers: RATE_LIMIT_HEADERS,
  };
}

/**
 * The ingress's OpenAPI 3.1 document: its top level (info, servers, tags), a path per webhook
 * endpoint, then the operations paths and the components.
 */
export function openApiDocument(options: OpenApiOptions = {}): OpenApiDocument {
  const definitions = Object.values(EVENT_REGISTRY);
  const document: Document = {
    openapi: '3.1.0',
    info: {
      title: 'partner-webhooks ingress',
      version: '1.0.0',
      description:
        'Receives the partner platform’s business-event webhooks. Every event is validated, its ' +
        'HMAC signature verified, and it is enqueued durably in Redis before the 200 ' +
        'acknowledgement; every refusal is `{ received: false, error: { code, message, details } }` ' +
        'and enqueues nothing. Generated from the schemas the ingress validates with.',
    },
    servers: options.servers ?? [
      { url: '/', description: 'the ingress that served this document' },
    ],
    tags: [
      { name: 'webhooks', description: 'The endpoints the partner platform posts events to' },
      { name: 'operations', description: 'Health, readiness, metrics and this document' },
    ],
    paths: {
      ...Object.fromEntries(
        definitions.map((definition) => [definition.path, { post: webhookOperation(definition) }]),
      ),
      ...operationsPaths(),
    },
    components: components(definitions),
  };
  return document;
}
