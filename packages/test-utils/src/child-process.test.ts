import { afterEach, describe, expect, it } from 'vitest';
import { ChildRun } from './child-process.js';
import { freePort } from './redis-server.js';

/** `node -e <script>` as a ChildRun. */
const node = (script: string, options: Parameters<typeof ChildRun.start>[2] = {}) =>
  ChildRun.start([process.execPath, '-e', script], {}, options);

const runs: ChildRun[] = [];
afterEach(async () => {
  await Promise.all(runs.splice(0).map((run) => run.stop('SIGKILL')));
});

describe('ChildRun', () => {
  it('rejects died, with its name and output, when the process exits before it is stopped', async () => {
    const run = node('console.log("going"); process.exit(3)', { name: 'quitter' });
    runs.push(run);
    await expect(run.died).rejects.toThrow(/^quitter exited \(3\) before it was stopped:\ngoing/);
  });

  it('never settles died for a process that stop() ended', async () => {
    const run = node('console.log("up"); setInterval(() => undefined, 1000)');
    await run.printed('up');
    expect(await run.stop()).toBe(null);
    const settled = await Promise.race([
      run.died.then(
        () => 'settled',
        () => 'settled',
      ),
      new Promise((resolve) => setTimeout(() => resolve('pending'), 100)),
    ]);
    expect(settled).toBe('pending');
  });

  it('waits until a URL answers, and rejects if the process exits first', async () => {
    const port = await freePort();
    const server = node(
      `setTimeout(() => require('node:http').createServer((q, s) => s.end()).listen(${port}), 300)`,
    );
    runs.push(server);
    await server.answers(`http://127.0.0.1:${port}/`, 20);

    const quitter = node('setTimeout(() => process.exit(1), 100)', { name: 'quitter' });
    runs.push(quitter);
    await expect(quitter.answers(`http://127.0.0.1:${await freePort()}/`, 20)).rejects.toThrow(
      /^quitter exited \(1\) before http/,
    );
  });

  it('reads IPC messages when started with ipc', async () => {
    const run = node('process.send({ n: 1 }); process.send({ n: 2 }); process.disconnect()', {
      ipc: true,
    });
    runs.push(run);
    const second = await run.message((message) => {
      const { n } = message as { n: number };
      return n === 2 ? n : undefined;
    });
    expect(second).toBe(2);
  });

  it('SIGKILLs a process that ignores the signal for killAfterMs', async () => {
    const run = node(
      'process.on("SIGTERM", () => undefined); console.log("up"); setInterval(() => undefined, 1000)',
      {
        killAfterMs: 200,
      },
    );
    await run.printed('up');
    await run.stop();
    expect(run.child.signalCode).toBe('SIGKILL');
  });
});
