import { INVALID_CURSOR, INVALID_TIME, storeFailure } from '@pw/records';
import { PwError } from '@pw/shared/runtime';
import { DASHBOARD_ERROR_CODES, DashboardError } from './error-response.js';

/**
 * `Retry-After` while the record store cannot be reached: node-postgres gives up connecting after
 * 10 s, so sooner would mostly meet the same failure.
 */
export const STORE_RETRY_AFTER_SECONDS = 10;

/** 503 `store_unavailable`: the record store cannot be reached or cannot work right now. */
export const storeUnavailable = (cause: unknown): DashboardError =>
  new DashboardError(
    503,
    DASHBOARD_ERROR_CODES.storeUnavailable,
    'The record store cannot be reached; try again shortly',
    { cause, retryAfterSeconds: STORE_RETRY_AFTER_SECONDS },
  );

/** A SQLSTATE: the store answered, with this code. */
const sqlState = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/**
 * A record store read's failure as the operator API answers it: the store away (`storeFailure`)
 * is 503 `store_unavailable`; a cursor or time the store refuses, or a value PostgreSQL cannot use
 * (SQLSTATE class 22, a data exception), is the query's fault: 400 `invalid_query`. Anything else
 * (a bug) is returned as it is, for a 500.
 */
export function recordStoreError(error: unknown): unknown {
  if (error instanceof DashboardError) return error;
  if (storeFailure(error) === 'unavailable') return storeUnavailable(error);
  if (error instanceof PwError && (error.code === INVALID_CURSOR || error.code === INVALID_TIME)) {
    const path = error.code === INVALID_TIME ? 'to' : 'cursor';
    return new DashboardError(400, DASHBOARD_ERROR_CODES.invalidQuery, error.message, {
      cause: error,
      details: [{ path, message: error.message }],
    });
  }
  if (sqlState(error)?.startsWith('22')) {
    return new DashboardError(
      400,
      DASHBOARD_ERROR_CODES.invalidQuery,
      `The record store cannot use a value of this query: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return error;
}

/** Reads the record store; a failure is thrown as `recordStoreError` makes it. */
export async function fromRecordStore<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw recordStoreError(error);
  }
}
