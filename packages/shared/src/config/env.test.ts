import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  commonEnv,
  ConfigError,
  envInt,
  isProduction,
  loadConfig,
  withCommonChecks,
} from './env.js';
import { resolveSigning, signingEnv } from './signing-env.js';

const schema = (production: boolean) =>
  withCommonChecks(
    z.object({
      ...commonEnv,
      ...signingEnv(production),
      PORT: envInt(3000, { min: 1, max: 65535 }),
    }),
  );

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
    const [fresh, old] = ['n'.repeat(32), 'o'.repeat(40)];
    const signing = resolveSigning(
      loadConfig(schema(true), { WEBHOOK_SECRETS: ` ${fresh} , ${old},` }),
    );
    expect(signing.webhookSecrets).toEqual([fresh, old]);
    expect(signing.warnings).toEqual([]);
  });

  it('in production, refuses the development secret and any secret under 32 bytes, naming neither', () => {
    const problems = problemsOf(() =>
      loadConfig(schema(true), { WEBHOOK_SECRETS: `${'k'.repeat(32)},dev-secret,a` }),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^WEBHOOK_SECRETS: secret 2 of 3 is the public development secret/),
      expect.stringMatching(
        /^WEBHOOK_SECRETS: secret 3 of 3 is 1 bytes long; production needs at least 32/,
      ),
    ]);
    // Outside production they are allowed (with the dev secret's warning when unset).
    expect(problemsOf(() => loadConfig(schema(false), { WEBHOOK_SECRETS: 'a' }))).toEqual([]);
  });
});

describe('configuration: NODE_ENV', () => {
  it.each(['production', 'Production', 'PRODUCTION', ' production '])(
    'NODE_ENV=%j is production',
    (value) => {
      expect(isProduction({ NODE_ENV: value })).toBe(true);
    },
  );

  it.each([undefined, '', 'development', 'prod', 'test'])('NODE_ENV=%j is not', (value) => {
    expect(isProduction({ NODE_ENV: value })).toBe(false);
  });

  it.each([
    [undefined, 'development'],
    ['', 'development'],
    ['Development', 'development'],
    ['TEST', 'test'],
    [' production ', 'production'],
  ])('NODE_ENV=%j is read as %j', (value, expected) => {
    const production = isProduction({ NODE_ENV: value });
    const env = { NODE_ENV: value, WEBHOOK_SECRETS: 'k'.repeat(32) };
    expect(loadConfig(schema(production), env).NODE_ENV).toBe(expected);
  });

  it.each(['prod', 'dev', 'staging', 'productio', 'production2'])(
    'NODE_ENV=%j stops the start, listed with every other problem',
    (value) => {
      const problems = problemsOf(() =>
        loadConfig(schema(isProduction({ NODE_ENV: value })), { NODE_ENV: value, PORT: 'eighty' }),
      );
      expect(problems).toEqual([
        'NODE_ENV: must be development, test or production (any letter case)',
        expect.stringMatching(/^PORT: /),
      ]);
    },
  );
});

describe('configuration: Redis Cluster', () => {
  it('is off by default; on, REDIS_URL may name several seed nodes', () => {
    expect(loadConfig(schema(false), {}).REDIS_CLUSTER).toBe(false);
    const config = loadConfig(schema(false), {
      REDIS_CLUSTER: 'true',
      REDIS_URL: 'redis://10.0.0.1:7000,10.0.0.2:7000',
      QUEUE_PREFIX: '{pw}',
    });
    expect(config.REDIS_CLUSTER).toBe(true);
    expect(config.REDIS_URL).toBe('redis://10.0.0.1:7000,10.0.0.2:7000');
  });

  it('refuses a queue prefix that is not a hash tag, and says why', () => {
    const problems = problemsOf(() =>
      loadConfig(schema(false), { REDIS_CLUSTER: 'true', QUEUE_PREFIX: 'pw' }),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^QUEUE_PREFIX: must be a hash tag such as \{pw\}/),
    ]);
  });

  it('lists its problems together with every other one', () => {
    const problems = problemsOf(() =>
      loadConfig(schema(false), {
        PORT: 'eighty',
        REDIS_URL: 'redis://a:7000,b:7000/1',
        REDIS_CLUSTER: 'true',
      }),
    );
    expect(problems.map((problem) => problem.split(':')[0])).toEqual([
      'PORT',
      'QUEUE_PREFIX',
      'REDIS_URL',
    ]);
    expect(
      problemsOf(() => loadConfig(schema(false), { REDIS_URL: 'redis://a:7000,b:7000' })),
    ).toEqual([expect.stringContaining('REDIS_URL: names several nodes: set REDIS_CLUSTER=true')]);
    expect(problemsOf(() => loadConfig(schema(false), { REDIS_CLUSTER: 'yes' }))).toEqual([
      'REDIS_CLUSTER: must be true or false',
    ]);
  });
});
