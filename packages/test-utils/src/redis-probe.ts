import { createConnection } from 'node:net';

/**
 * Whether a Redis answers at `host:port`: a PING gets a Redis reply (`+PONG`, or an error such as
 * `-NOAUTH`) within `timeoutMs`. Nothing listening, a silent listener or one that answers
 * something else is no Redis.
 */
export function redisAnswers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    let reply = '';
    const done = (answers: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answers);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(/^[+-]/.test(reply));
    });
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
  });
}

/** Resolves once a Redis answers at `host:port`; rejects after `timeoutMs` without one. */
export async function waitForRedis(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await redisAnswers(host, port))) {
    if (Date.now() > deadline)
      throw new Error(`no Redis answered on ${host}:${port} in ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
