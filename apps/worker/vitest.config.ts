// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// The suites that hold the circuit breaker's promises to wall-clock bounds (a few probe
// intervals): they overran them on a busy two-core run beside another file of the suite, or with
// the timers and connections of the files before them. They run after the rest, one file at a
// time, each with modules of its own.
const bounded = [
  'test/breaker-model.test.ts',
  'test/breaker-promises.test.ts',
  'test/circuit-processes.test.ts',
  'test/outages.test.ts',
  'test/partition-outage.test.ts',
  'test/poison-input.test.ts',
];

// Each project says its own files: `extends` would add the shared include to its list.
const { include, exclude, ...shared } = defineTestConfig().test!;

export default {
  test: {
    ...shared,
    projects: [
      // The rest share their loaded modules, one file at a time like every suite.
      {
        extends: true,
        test: {
          name: 'worker',
          include,
          exclude: [...exclude!, ...bounded],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'breaker', include: bounded, isolate: true, sequence: { groupOrder: 1 } },
      },
    ],
  },
};
