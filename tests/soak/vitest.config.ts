// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// The soak's tests each start a whole system; beside the other suites on two cores, the minute of
// traffic through every fault and the breaker faults' run may each take several minutes.
export default defineTestConfig({ testTimeout: 600_000, postgres: true });
