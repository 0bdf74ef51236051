/**
 * Why a call to the record store failed, as far as its caller should act on it:
 * - `unavailable`: the store cannot be reached or cannot work right now (no connection, starting
 *   or shutting down, out of disk or connections, a conflict to retry, its schema or permissions
 *   broken). Waiting, or mending the store, helps; the data is not at fault.
 * - `refused`: the store answered and refused this data (a value it cannot hold, a limit the row
 *   passes, a constraint). Writing the same data again would fail the same way.
 */
export type StoreFailure = 'unavailable' | 'refused';

/** Node's socket errors: PostgreSQL is not reachable. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ENOENT', // a Unix socket's file that is not there (yet)
]);

/**
 * SQLSTATE classes (the code's first two characters) that say the store, not the row, is at
 * fault: 08 connection, 25 transaction state (a read-only standby), 28 authorization, 3D no such
 * database, 40 serialization failure or deadlock, 42 a missing table or permission (the schema,
 * not the data), 53 insufficient resources (disk full, too many connections), 55 object not in
 * prerequisite state (a lock not available), 57 operator intervention (shutdown, cancelled,
 * starting up), 58 system error (I/O), F0 configuration file, XX internal error.
 */
const UNAVAILABLE_CLASSES = new Set([
  '08',
  '25',
  '28',
  '3D',
  '40',
  '42',
  '53',
  '55',
  '57',
  '58',
  'F0',
  'XX',
]);

/**
 * node-postgres's own errors for a connection that broke or never came (they carry no code), and
 * a connection attempt that timed out.
 */
const CONNECTION_MESSAGES =
  /connection terminated|timeout|connection error|not queryable|terminating connection|cannot use a pool after calling end/i;

/**
 * True when PostgreSQL could not be reached or talked to at all (refused, reset, timed out,
 * starting up): the narrowest kind of `unavailable`, which a process starting may wait out.
 */
export function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (SOCKET_ERRORS.has(code) || code === '57P03' || code.startsWith('08')) return true;
  }
  // An aggregate of connection attempts (IPv4 and IPv6 both refused), as Node raises it.
  if (error instanceof AggregateError) return error.errors.some(isConnectionFailure);
  return (
    error instanceof Error && typeof code !== 'string' && CONNECTION_MESSAGES.test(error.message)
  );
}

/** Whether `error`, thrown by a call to the record store, is the store's fault or the data's. */
export function storeFailure(error: unknown): StoreFailure {
  if (isConnectionFailure(error)) return 'unavailable';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
    return UNAVAILABLE_CLASSES.has(code.slice(0, 2)) ? 'unavailable' : 'refused';
  return 'refused';
}

/** True when the store cannot be reached or cannot work right now (see `storeFailure`). */
export const isStoreUnavailable = (error: unknown): boolean =>
  storeFailure(error) === 'unavailable';

/**
 * True when the store refused a change because it has not the webhook the change is about yet
 * (a foreign key): the webhook's own change is still on its way (held by another recorder, or by
 * one that died, until it is taken over), and the change can be written once it is.
 */
export const isWebhookNotStoredYet = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === '23503';
