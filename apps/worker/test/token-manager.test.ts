import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenError, TokenManager } from '@pw/shared/auth';
import type { ClientCredentials } from '@pw/shared/auth';
import { startSandbox } from '@pw/sandbox';
import type { Sandbox } from './harness.js';

let sandbox: Sandbox;
let credentials: ClientCredentials;
beforeAll(async () => {
  sandbox = await startSandbox({ idpPort: 0, apiPort: 0, accessTokenTtlSeconds: 2 });
  credentials = {
    authUrl: sandbox.env.AUTH_URL,
    realm: sandbox.env.AUTH_REALM,
    clientId: sandbox.env.AUTH_CLIENT_ID,
    clientSecret: sandbox.env.AUTH_CLIENT_SECRET,
  };
});
afterAll(async () => {
  await sandbox.stop();
});

describe('token manager against a real OpenID provider', () => {
  it('caches a token, and renews it before its 2-second lifetime runs out', async () => {
    let now = Date.now();
    const tokens = new TokenManager({ now: () => now });
    const first = await tokens.getToken(credentials);
    expect(await tokens.getToken(credentials)).toBe(first);
    expect(await sandbox.idp.isIssued(first)).toBe(true);
    // 2 s lifetime: renewed once less than 10% of it (0.2 s) remains.
    now += 1850;
    const second = await tokens.getToken(credentials);
    expect(second).not.toBe(first);
    expect(await sandbox.idp.isIssued(second)).toBe(true);
  });

  it('200 concurrent callers cause one token request', async () => {
    const tokens = new TokenManager();
    const before = sandbox.idp.tokenRequests;
    const all = await Promise.all(Array.from({ length: 200 }, () => tokens.getToken(credentials)));
    expect(new Set(all).size).toBe(1);
    expect(sandbox.idp.tokenRequests - before).toBe(1);
  });

  it('invalidate() drops the token so the next call fetches a new one', async () => {
    const tokens = new TokenManager();
    const first = await tokens.getToken(credentials);
    tokens.invalidate(credentials, first);
    expect(await tokens.getToken(credentials)).not.toBe(first);
  });

  it('a wrong secret gives an error naming invalid_client, after its retries, without the secret', async () => {
    const tokens = new TokenManager({ retryDelayMs: 10 });
    const before = sandbox.idp.tokenRequests;
    const wrong = { ...credentials, clientSecret: 'definitely-wrong-secret' };
    const error = await tokens.getToken(wrong).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).code).toBe('invalid_client');
    expect((error as TokenError).message).toContain('invalid_client');
    expect((error as TokenError).message).not.toContain('definitely-wrong-secret');
    expect(sandbox.idp.tokenRequests - before).toBe(3);
  });
});
