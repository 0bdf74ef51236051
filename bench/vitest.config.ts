// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../packages/test-utils/src/vitest-config.js';

// The smallest Redis-cost run takes about 40 s alone (most of it waiting for its records to
// expire); beside the other suites on two cores, up to three times that.
export default defineTestConfig({ testTimeout: 300_000 });
