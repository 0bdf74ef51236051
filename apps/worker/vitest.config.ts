// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// Its suites mostly wait (retries, circuits' probe intervals, outages): two files at once.
export default defineTestConfig({ maxWorkers: 2 });
