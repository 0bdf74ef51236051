// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../packages/test-utils/src/vitest-config.js';

// `npm run test:long`: the whole quick bench, about 80 s alone, and the profiles.
export default defineTestConfig({ testTimeout: 600_000, long: true });
