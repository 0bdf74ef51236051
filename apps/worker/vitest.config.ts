// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// One file at a time, each with modules of its own: its breaker suites hold the circuit's promises
// to wall-clock bounds (a few probe intervals), which they overran on a busy two-core run beside
// another file of the suite, or with the timers and connections of the files before them.
export default defineTestConfig({ isolate: true });
