import { defineConfig } from 'vitest/config';

// The sandbox's own tests need no Redis.
export default defineConfig({ test: { include: ['src/**/*.test.ts'] } });
