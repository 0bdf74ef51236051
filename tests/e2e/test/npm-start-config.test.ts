// `npm start` checks its own settings before it starts anything: a NODE_ENV typo stops it at once,
// with one message, before the sandbox, the embedded PostgreSQL or any app is started.
import { describe, expect, it } from 'vitest';
import { ChildRun, freePort } from '@pw/test-utils';

describe('npm start with an invalid setting', () => {
  it('stops before starting anything, with one message listing every problem (NODE_ENV=prod)', async () => {
    const run = ChildRun.tsx('scripts/start.ts', {
      NODE_ENV: 'prod',
      EMBEDDED_POSTGRES_PORT: 'none',
      DATABASE_URL: '',
      SANDBOX_IDP_PORT: String(await freePort()),
      SANDBOX_API_PORT: String(await freePort()),
      INGRESS_PORT: String(await freePort()),
      DASHBOARD_PORT: String(await freePort()),
    });
    try {
      expect(await run.exited).toBe(1);
      expect(run.output.trim().split('\n')).toEqual([
        'npm start: Invalid configuration:',
        '  - NODE_ENV: must be development, test or production (any letter case)',
        '  - EMBEDDED_POSTGRES_PORT: must be a whole number',
      ]);
    } finally {
      await run.stop('SIGKILL');
    }
  });
});
