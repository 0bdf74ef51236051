// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// The soak of npm test sends for 60 s, then drains and waits out the records' time in Redis;
// beside the other suites on two cores, it may take several minutes.
export default defineTestConfig({ testTimeout: 600_000, postgres: true });
