// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

// A PostgreSQL too: the recorder and the dashboard are started with a record store (serve.test.ts,
// image-layout.test.ts).
export default defineTestConfig({ testTimeout: 60_000, postgres: true });
