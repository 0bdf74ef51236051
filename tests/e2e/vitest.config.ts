// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// Each file runs whole systems that mostly wait (for the partner, an outage): two files at once.
export default defineTestConfig({ testTimeout: 60_000, postgres: true, maxWorkers: 2 });
