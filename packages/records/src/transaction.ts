import type pg from 'pg';

/**
 * Runs `work` in one transaction on a client of its own: committed when it resolves, rolled back
 * when it throws. A client whose connection broke (an error on it, or a failed rollback) is
 * discarded, not returned to the pool.
 */
export async function transaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = 'begin',
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection that dies while checked out says so on the client: without a listener that
  // would end the process (PostgreSQL restarting must not stop the recorder).
  const onError = (error: Error) => (broken = error);
  client.on('error', onError);
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
