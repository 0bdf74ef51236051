// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// One file at a time: its breaker suites hold the circuit's promises to wall-clock bounds (a few
// probe intervals), which two of them side by side on a busy two-core machine overrun.
export default defineTestConfig();
