import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@pw/shared/config';
import { loadWorkerConfig } from './config.js';

const dir = mkdtempSync(join(tmpdir(), 'pw-worker-config-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const base = {
  AUTH_URL: 'http://127.0.0.1:3010',
  AUTH_REALM: 'partner',
  AUTH_CLIENT_ID: 'pw',
  AUTH_CLIENT_SECRET: 'secret',
  API_BASE_URL: 'http://127.0.0.1:3011',
};
const problemsOf = (env: Record<string, string>) => {
  try {
    loadWorkerConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
};

/** An ACTIONS_CONFIG with every kind of setting: one action, commission rates, one market. */
const ACTIONS_YAML = `actions:
  lock_price:
    attempts: 3
    backoff: { type: fixed, delay_ms: 250 }
    path: /v2/quotes/{quote_id}/lock
    rate_limit: { max: 10, duration_ms: 1000 }
    max_concurrent: 2
    skip_when_stale: false
commission:
  default_rate: 0.04
  rates_by_market: { ASIA: 0.06 }
markets:
  ASIA:
    realm: staging-asia
    client_id: pw-asia
    client_secret_env: ASIA_CLIENT_SECRET
    api_base_url: https://asia.partner.example
`;

describe('worker configuration', () => {
  it('reads ACTIONS_CONFIG in YAML: per-action settings, commission rates and market realms', () => {
    const path = file('actions.yaml', ACTIONS_YAML);
    const config = loadWorkerConfig({
      ...base,
      ACTIONS_CONFIG: path,
      ASIA_CLIENT_SECRET: 'asia-secret',
    });
    expect(config.actions.actions.lock_price).toEqual({
      attempts: 3,
      backoff: { type: 'fixed', delay_ms: 250 },
      path: '/v2/quotes/{quote_id}/lock',
      rate_limit: { max: 10, duration_ms: 1000 },
      max_concurrent: 2,
      skip_when_stale: false,
    });
    expect(config.actions.commission).toEqual({
      default_rate: 0.04,
      rates_by_market: { ASIA: 0.06 },
    });
    expect(config.targets.byMarket.get('asia')).toEqual({
      baseUrl: 'https://asia.partner.example',
      credentials: {
        authUrl: base.AUTH_URL,
        realm: 'staging-asia',
        clientId: 'pw-asia',
        clientSecret: 'asia-secret',
        scope: 'openid',
      },
    });
    expect(config.targets.fallback.credentials.realm).toBe('partner');
  });

  it('lists every problem of the environment and of the file together', () => {
    const path = file(
      'actions.json',
      JSON.stringify({ actions: { lock_price: { attempts: 0 }, brew_coffee: {} } }),
    );
    const problems = problemsOf({ ...base, ACTIONS_CONFIG: path, WORKER_CONCURRENCY: '0' });
    expect(problems.some((p) => p.startsWith('WORKER_CONCURRENCY'))).toBe(true);
    expect(problems.some((p) => p.includes('actions.lock_price.attempts'))).toBe(true);
    expect(problems.some((p) => p.includes('brew_coffee'))).toBe(true);
  });

  it('a market whose secret variable is unset is a start-up problem naming the variable, not its value', () => {
    const path = file(
      'markets.json',
      JSON.stringify({
        markets: { EU: { realm: 'eu', client_id: 'pw-eu', client_secret_env: 'EU_SECRET' } },
      }),
    );
    expect(problemsOf({ ...base, ACTIONS_CONFIG: path })).toEqual([
      'ACTIONS_CONFIG markets.EU: environment variable EU_SECRET is not set',
    ]);
  });

  it('an unreadable ACTIONS_CONFIG is a start-up problem', () => {
    expect(problemsOf({ ...base, ACTIONS_CONFIG: join(dir, 'missing.yaml') })[0]).toContain(
      'cannot read',
    );
  });
});

describe('worker configuration in production', () => {
  it('in production, plain http is refused except on loopback', () => {
    const problems = problemsOf({
      ...base,
      NODE_ENV: 'production',
      AUTH_URL: 'http://sso.example.com',
    });
    expect(problems).toEqual([
      'AUTH_URL: must be https:// in production (plain http only for loopback addresses)',
    ]);
  });

  it("in production, a market's auth_url and api_base_url must be https too (loopback aside), whatever the case of NODE_ENV", () => {
    const path = file(
      'markets.json',
      JSON.stringify({
        markets: {
          EU: {
            realm: 'eu',
            client_id: 'pw-eu',
            client_secret_env: 'EU_SECRET',
            auth_url: 'http://sso.eu.example',
            api_base_url: 'http://api.eu.example',
          },
          LOCAL: {
            realm: 'local',
            client_id: 'pw-local',
            client_secret_env: 'EU_SECRET',
            auth_url: 'http://127.0.0.1:3010',
          },
        },
      }),
    );
    const env = { ...base, ACTIONS_CONFIG: path, EU_SECRET: 'eu-secret' };
    expect(problemsOf({ ...env, NODE_ENV: 'PRODUCTION' })).toEqual([
      'ACTIONS_CONFIG markets.EU.auth_url: must be https:// in production (plain http only for loopback addresses)',
      'ACTIONS_CONFIG markets.EU.api_base_url: must be https:// in production (plain http only for loopback addresses)',
    ]);
    expect(problemsOf(env)).toEqual([]);
  });
});
