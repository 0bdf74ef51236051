import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { commonEnv, ConfigError, envInt, loadConfig } from './env.js';
import { resolveSigning, signingEnv } from './signing-env.js';

const schema = (production: boolean) =>
  z.object({ ...commonEnv, ...signingEnv(production), PORT: envInt(3000, { min: 1, max: 65535 }) });

const problemsOf = (fn: () => unknown): readonly string[] => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('configuration', () => {
  it('applies defaults, treats empty strings as unset, and freezes the result', () => {
    const config = loadConfig(schema(false), { PORT: '', REDIS_URL: '' });
    expect(config.PORT).toBe(3000);
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(config.QUEUE_PREFIX).toBe('pw');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('lists every problem in one error', () => {
    const problems = problemsOf(() =>
      loadConfig(schema(true), {
        PORT: 'eighty',
        REDIS_URL: 'http://x',
        LOG_LEVEL: 'loud',
        SIGNATURE_MODE: 'off',
      }),
    );
    expect(problems.map((problem) => problem.split(':')[0])).toEqual([
      'LOG_LEVEL',
      'REDIS_URL',
      'WEBHOOK_SECRETS',
      'SIGNATURE_MODE',
      'PORT',
    ]);
  });

  it('outside production, missing secrets fall back to the dev secret with a warning', () => {
    const signing = resolveSigning(loadConfig(schema(false), {}));
    expect(signing.webhookSecrets).toEqual(['dev-secret']);
    expect(signing.warnings).toHaveLength(1);
    expect(signing.warnings[0]).not.toContain('dev-secret');
  });

  it('splits comma-separated secrets, the first one signing', () => {
    const signing = resolveSigning(loadConfig(schema(true), { WEBHOOK_SECRETS: ' new , old,' }));
    expect(signing.webhookSecrets).toEqual(['new', 'old']);
    expect(signing.warnings).toEqual([]);
  });
});
