// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../packages/test-utils/src/vitest-config.js';

// The quick run takes about 80 s alone; beside the other suites on two cores, up to three times that.
export default defineTestConfig({ testTimeout: 300_000 });
