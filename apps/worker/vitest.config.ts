// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../../packages/test-utils/src/vitest-config.js';

export default defineTestConfig();
