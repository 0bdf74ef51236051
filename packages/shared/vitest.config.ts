// A relative import: vitest loads its config before TypeScript packages resolve.
import { defineTestConfig } from '../test-utils/src/vitest-config.js';

// Units beside the code; the Lua scripts' tests, against a real Redis, in test/.
export default defineTestConfig();
