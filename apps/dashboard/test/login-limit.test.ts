// Guessing the dashboard's password: failed logins are limited per client address, counted in
// Redis for every dashboard process, through the real app (supertest connects from 127.0.0.1).
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { AUTH, startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

const started: DashboardHarness[] = [];
const dashboard = (options: Parameters<typeof startDashboard>[0] = {}) => {
  const h = startDashboard(options);
  started.push(h);
  return h;
};
afterAll(async () => {
  await Promise.all(started.map((h) => h.close()));
});

const guess = (h: DashboardHarness, password: string, from?: string) => {
  const test = request(h.app).get('/api/rules').auth(AUTH.user, password);
  return from === undefined ? test : test.set('X-Forwarded-For', from);
};

async function failTenTimes(h: DashboardHarness, from?: string) {
  for (let i = 0; i < 10; i += 1) {
    expect((await guess(h, `wrong-${i}`, from)).status).toBe(401);
  }
}

const refusals = (h: DashboardHarness) =>
  h.logs.filter((line) => line.msg === 'login refused: too many failed logins from this address');

describe('the failed-login limit', () => {
  it('after 10 failed logins answers 429 too_many_logins with Retry-After for the minute, the right password included; health and metrics stay open; each refusal is logged without the password', async () => {
    const h = dashboard();
    await failTenTimes(h);
    const right = await guess(h, AUTH.password);
    expect(right.status).toBe(429);
    expect(right.body).toMatchObject({ error: { code: 'too_many_logins' } });
    const retryAfter = Number(right.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(55);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await guess(h, 'wrong-again')).status).toBe(429);
    expect((await request(h.app).get('/admin/queues')).status).toBe(429);
    expect((await request(h.app).get('/healthz')).status).toBe(200);
    expect((await request(h.app).get('/metrics')).status).toBe(200);

    expect(refusals(h)).toHaveLength(3);
    for (const line of refusals(h)) {
      expect(line.level).toBe('warn');
      expect(line.address).toMatch(/127\.0\.0\.1/);
      expect(line.retry_after_seconds).toBeGreaterThan(0);
    }
    const logged = JSON.stringify(h.logs);
    expect(logged).not.toContain(AUTH.password);
    expect(logged).not.toContain('wrong-');
  });

  it('lets the right password in again once the window has passed, and never counts a login that succeeded or carried no credentials', async () => {
    const h = dashboard({ loginLimit: { windowMs: 1500 } });
    for (let i = 0; i < 20; i += 1) {
      expect((await guess(h, AUTH.password)).status).toBe(200);
      expect((await request(h.app).get('/api/rules')).status).toBe(401);
    }
    await failTenTimes(h);
    const refused = await guess(h, AUTH.password);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^[12]$/);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect((await guess(h, AUTH.password)).status).toBe(200);
  });

  it('lets no more than 10 of a burst of parallel guesses through', async () => {
    const h = dashboard();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => guess(h, `parallel-${i}`)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40);
  });

  it('is shared by every dashboard process on the same Redis', async () => {
    const one = dashboard();
    const other = dashboard({ prefix: one.prefix });
    await failTenTimes(one);
    expect((await guess(other, AUTH.password)).status).toBe(429);
  });
});

describe('which address the limit counts', () => {
  it('counts the connection’s address, whatever X-Forwarded-For says, unless proxies are trusted: then each address the proxy names on its own', async () => {
    const direct = dashboard();
    for (let i = 0; i < 10; i += 1) {
      expect((await guess(direct, 'wrong', `203.0.113.${i}`)).status).toBe(401);
    }
    expect((await guess(direct, AUTH.password, '203.0.113.99')).status).toBe(429);

    const proxied = dashboard({ trustProxyHops: 1 });
    await failTenTimes(proxied, '203.0.113.7');
    expect((await guess(proxied, AUTH.password, '203.0.113.7')).status).toBe(429);
    expect((await guess(proxied, AUTH.password, '203.0.113.8')).status).toBe(200);
    expect(refusals(proxied)).toEqual([expect.objectContaining({ address: '203.0.113.7' })]);
  });

  it('behind N proxies counts the address N hops from the right: what the client wrote before it changes nothing', async () => {
    const proxied = dashboard({ trustProxyHops: 2 });
    // The client's own X-Forwarded-For entry first, then what each of the two proxies appended.
    for (let i = 0; i < 10; i += 1) {
      expect((await guess(proxied, 'wrong', `198.51.100.${i}, 203.0.113.7, 10.0.0.2`)).status).toBe(
        401,
      );
    }
    expect((await guess(proxied, AUTH.password, '1.2.3.4, 203.0.113.7, 10.0.0.2')).status).toBe(
      429,
    );
    expect((await guess(proxied, AUTH.password, '203.0.113.8, 10.0.0.2')).status).toBe(200);
  });

  it('refuses an address that is none (longer than an IPv6 address, or not an address), keeping no count for it', async () => {
    const proxied = dashboard({ trustProxyHops: 1 });
    const counts = () => proxied.redis.keys(`${proxied.prefix}:dashboard:login-failures:*`);
    const before = await counts();
    for (const named of ['x'.repeat(8000), 'operator-laptop', '203.0.113.7:80', '1'.repeat(46)]) {
      const answer = await guess(proxied, 'wrong', named);
      expect(answer.status, named.slice(0, 20)).toBe(400);
      expect((answer.body as { error: { code: string } }).error.code).toBe('invalid_request');
    }
    expect(await counts()).toEqual(before);
    // An IPv6 address of full length is an address.
    const longest = 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255';
    expect((await guess(proxied, 'wrong', longest)).status).toBe(401);
    expect(await counts()).toHaveLength(before.length + 1);
  });
});
