import { describe, expect, it } from 'vitest';
import { partCosts, partOf, summarize } from './cpu-profile.js';
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

  it('compares two profiles part by part per unit of work, busy first, then by what ours adds', () => {
    const profile = (ms: Record<string, number>, idleMs: number): CpuProfile => {
      const names = Object.keys(ms);
      return {
        nodes: [
          { id: 1, callFrame: frame('(idle)', '') },
          ...names.map((name, i) => ({
            id: i + 2,
            callFrame: frame('f', `file:///x/node_modules/${name}/index.js`),
          })),
        ],
        samples: [1, ...names.map((_, i) => i + 2)],
        timeDeltas: [idleMs * 1000, ...names.map((name) => ms[name]! * 1000)],
        startTime: 0,
        endTime: (idleMs + Object.values(ms).reduce((a, b) => a + b, 0)) * 1000,
      };
    };
    // The baseline did 100 jobs, ours 200 actions.
    const base = {
      summary: summarize(profile({ ioredis: 10, undici: 20 }, 5), Infinity),
      units: 100,
    };
    const ours = {
      summary: summarize(profile({ ioredis: 60, undici: 40, zod: 2 }, 50), Infinity),
      units: 200,
    };
    expect(partCosts(base, ours)).toEqual([
      { name: 'busy', baseUs: 300, oursUs: 510 },
      { name: 'ioredis', baseUs: 100, oursUs: 300 },
      { name: 'zod', baseUs: 0, oursUs: 10 },
      { name: 'undici', baseUs: 200, oursUs: 200 },
    ]);
  });
});
