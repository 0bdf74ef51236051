/**
 * Every refusal the ingress answers with: its HTTP status and when it happens. The ingress maps
 * codes to statuses through this table and the OpenAPI document is written from it.
 */
export const ERROR_CODES = {
  invalid_json: {
    status: 400,
    when: 'the body is not JSON, or has no canonical form (a number that overflows, a lone surrogate)',
  },
  invalid_signature: {
    status: 401,
    when: 'the signature is missing, malformed, or no secret matches (checked before the schema)',
  },
  not_found: { status: 404, when: 'there is no such endpoint' },
  method_not_allowed: { status: 405, when: 'a method other than POST on a webhook endpoint' },
  payload_too_large: {
    status: 413,
    when:
      'the body is over MAX_BODY_BYTES, has more than 2,000 JSON values or is nested deeper ' +
      'than 32 levels (refused before it is parsed)',
  },
  unsupported_media_type: {
    status: 415,
    when: 'the body is not declared application/json (UTF-8), or its encoding is unknown',
  },
  validation_failed: {
    status: 422,
    when: 'the JSON value is not an object, or the schema refuses it; details names each field path',
  },
  timestamp_out_of_range: {
    status: 422,
    when:
      "timestamp lies more than MAX_CLOCK_SKEW_SECONDS ahead of the receiver's clock, or further " +
      'back than DEDUP_WINDOW_SECONDS; details[0].path is timestamp',
  },
  rate_limited: {
    status: 429,
    when:
      'more than INGRESS_RATE_LIMIT requests (whatever their answer) in the current second from ' +
      'this sender address, counted by each ingress process',
  },
  unavailable: {
    status: 503,
    when:
      'not confirmed: Redis did not confirm the webhook within 3 seconds (sooner when it is ' +
      'known to be unreachable), or the ingress met an unexpected error. It may or may not have ' +
      'been enqueued: retry it; a retry of one that did get in is answered as a repeat, with its ' +
      'first acknowledgement, and runs nothing twice',
  },
} as const satisfies Record<string, { status: number; when: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Seconds a sender is told to wait (`Retry-After`) after a 503. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
