import { valueAt } from '@pw/shared/rules';
import { headOf } from '@pw/shared/outcomes';
import { PermanentError } from '@pw/shared/runtime';
import type { FailureCode } from '@pw/shared/runtime';

/** The event has no usable value (absent, null, an object) for a placeholder. */
export const MISSING_FIELD = 'missing_field' satisfies FailureCode;
/** The value would not stay one path segment: empty, `.` or `..`, even once decoded. */
export const INVALID_PATH_VALUE = 'invalid_path_value' satisfies FailureCode;
/**
 * How many rounds of percent-decoding a value is followed through. No real id is encoded deeper;
 * a value that still decodes further is refused rather than followed (each round costs its length).
 */
export const MAX_DECODINGS = 10;

const DOT_SEGMENTS: ReadonlySet<string> = new Set(['', '.', '..']);

/** One round of lenient percent-decoding: valid `%XX` runs as UTF-8, anything else left as is. */
function percentDecode(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) =>
    Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'),
  );
}

/** True when the value, or any decoding of it, is empty, `.` or `..` (or is decoded too deep). */
function isDotSegment(value: string): boolean {
  let current = value;
  for (let round = 0; ; round++) {
    if (DOT_SEGMENTS.has(current)) return true;
    const decoded = percentDecode(current);
    if (decoded === current) return false;
    if (round === MAX_DECODINGS) return true;
    current = decoded;
  }
}

/** A short, safe rendering of a value for an error message. */
const preview = (value: string) =>
  JSON.stringify(value.length > 40 ? `${headOf(value, 40)}…` : value);

/** The value percent-encoded as one path segment, or a permanent `invalid_path_value`. */
function pathSegment(value: string, field: string): string {
  if (isDotSegment(value)) {
    throw new PermanentError(
      INVALID_PATH_VALUE,
      `the event's ${field} (${preview(value)}) cannot be a path segment`,
    );
  }
  try {
    return encodeURIComponent(value);
  } catch (error) {
    // A lone surrogate: no URL can carry it.
    throw new PermanentError(
      INVALID_PATH_VALUE,
      `the event's ${field} cannot be encoded in a path`,
      { cause: error },
    );
  }
}

/**
 * Fills `{customer_id}` or `{metadata.market}` from the event, each value as exactly one path
 * segment, so no event can steer a call to another path of the partner API.
 */
export function expandPath(template: string, event: Record<string, unknown>): string {
  return template.replace(/\{([^}]+)\}/g, (_, field: string) => {
    const value = valueAt(event, field);
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new PermanentError(MISSING_FIELD, `the event has no ${field} for ${template}`);
    }
    return pathSegment(String(value), field);
  });
}
