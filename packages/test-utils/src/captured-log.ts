import { Writable } from 'node:stream';
import { createLogger } from '@pw/shared/runtime';
import type { Logger } from '@pw/shared/runtime';

/** A logger at `level` whose every line is kept, parsed, in `logs`. */
export function capturedLog(
  name: string,
  level = 'info',
): { log: Logger; logs: Record<string, unknown>[] } {
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { log: createLogger({ name, level, destination }), logs };
}
