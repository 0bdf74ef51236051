// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// The soak's tests in npm test each start a whole system; beside the other suites on two cores,
// the breaker faults' run may take several minutes.
export default defineTestConfig({ testTimeout: 600_000, postgres: true });
