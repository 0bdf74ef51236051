import { afterAll, describe, expect, it } from 'vitest';
import { PrivateRedis, portTaken } from './redis-server.js';

describe('PrivateRedis', () => {
  let redis: PrivateRedis | undefined;
  afterAll(async () => {
    await redis?.destroy();
  });

  it('starts, stops and starts again on the same port, keeping data with the append-only file', async () => {
    redis = await PrivateRedis.start({ appendOnly: true });
    const client = redis.client();
    client.on('error', () => undefined);
    await client.set('kept', 'yes');
    await redis.stop();
    await expect(client.ping()).rejects.toThrow();
    await redis.resume();
    const again = redis.client();
    expect(await again.get('kept')).toBe('yes');
    client.disconnect();
    again.disconnect();
  });

  it('fails to start on a port another server took, with an error a start on a port of its own choosing retries', async () => {
    redis ??= await PrivateRedis.start();
    const error = await PrivateRedis.start({ port: redis.port }).catch(
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(Error);
    expect(portTaken(error)).toBe(true);
  });
});
