import { describe, expect, it } from 'vitest';
import { partOf, summarize } from './cpu-profile.js';
import type { CpuProfile } from './cpu-profile.js';

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

describe('a CPU profile summary', () => {
  it('names the package, workspace, Node or V8 part a frame belongs to', () => {
    expect(partOf('file:///x/node_modules/ioredis/built/Redis.js', 'sendCommand')).toBe('ioredis');
    expect(partOf('file:///x/node_modules/@pinojs/redact/index.js', 'redact')).toBe(
      '@pinojs/redact',
    );
    expect(partOf('file:///x/apps/worker/dist/main.js', 'callAction')).toBe('apps/worker');
    expect(partOf('node:net', 'write')).toBe('node');
    expect(partOf('', '(garbage collector)')).toBe('(garbage collector)');
    expect(partOf('', 'writeUtf8String')).toBe('(native)');
  });

  it('adds up self time by part and by function from the samples, idle apart', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(idle)', '') },
        { id: 2, callFrame: frame('sendCommand', 'file:///x/node_modules/ioredis/Redis.js') },
        { id: 3, callFrame: frame('exec', 'file:///x/node_modules/ioredis/Pipeline.js') },
      ],
      samples: [2, 3, 2, 1],
      timeDeltas: [1000, 2000, 2000, 4000],
      startTime: 0,
      endTime: 9_000,
    };
    const summary = summarize(profile);
    expect(summary).toMatchObject({ totalMs: 9, idleMs: 4 });
    expect(summary.byPart[0]).toEqual({ name: 'ioredis', ms: 5, pct: 55.6 });
    expect(summary.byFunction.map((share) => share.name)).toEqual([
      '(idle)',
      'sendCommand ioredis Redis.js:1',
      'exec ioredis Pipeline.js:1',
    ]);
  });
});
