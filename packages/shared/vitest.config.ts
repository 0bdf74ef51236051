import { defineConfig } from 'vitest/config';

// The shared package's tests are pure units: no Redis needed.
export default defineConfig({ test: { include: ['src/**/*.test.ts'] } });
