import { defineTestConfig } from './src/vitest-config.js';

export default defineTestConfig();
