// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// `npm run test:long`: the soak sends for 60 s, then drains and waits out the records' time in
// Redis; beside the bench's long tests on two cores, it may take several minutes.
export default defineTestConfig({ testTimeout: 600_000, postgres: true, long: true });
