import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claimAcrossProcesses, freePort, PrivateRedis, portTaken } from './redis-server.js';

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

describe('freePort across processes', () => {
  it('never hands out a port a live process claimed; a claim of a process that ended is taken over', async () => {
    // Another process, alive: its claim holds.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], {
      stdio: 'ignore',
    });
    // A port freePort handed out is claimed by this process.
    const port = await freePort();
    const file = join(tmpdir(), 'pw-port-claims', String(port));
    expect(await readFile(file, 'utf8')).toBe(String(process.pid));
    try {
      // Made the other process's: not claimable while it lives, then taken over.
      await writeFile(file, String(other.pid));
      expect(await claimAcrossProcesses(port)).toBe(false);
      other.kill('SIGKILL');
      await once(other, 'exit');
      expect(await claimAcrossProcesses(port)).toBe(true);
      expect(await readFile(file, 'utf8')).toBe(String(process.pid));
    } finally {
      other.kill('SIGKILL');
    }
  });
});
