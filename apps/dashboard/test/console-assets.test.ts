// The console's page and bundle as the dashboard serves them: behind basic auth, under a strict
// Content-Security-Policy, with no inline script; a missing bundle is reported, not a blank page.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../build-console.js';
import { startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

let folder: string;
let built: DashboardHarness;
let unbuilt: DashboardHarness;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'pw-console-'));
  await buildConsole(join(folder, 'console'));
  built = startDashboard({ consoleDir: join(folder, 'console') });
  unbuilt = startDashboard({ consoleDir: join(folder, 'never-built') });
}, 60_000);
afterAll(async () => {
  await Promise.all([built?.close(), unbuilt?.close()]);
  await rm(folder, { recursive: true, force: true });
});

describe('the console at /', () => {
  it('needs the dashboard credentials', async () => {
    expect((await request(built.app).get('/')).status).toBe(401);
    expect((await request(built.app).get('/console/app.js')).status).toBe(401);
  });

  it('is served with a policy that allows only its own scripts and styles, and no inline script', async () => {
    const page = await built.as('get', '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("style-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');
    const scripts = [...page.text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [tag, body] of scripts) {
      expect(tag).toMatch(/src="console\/app\.js"/);
      expect(body?.trim()).toBe('');
    }
    expect(page.text).not.toMatch(/\sstyle=/);

    const script = await built.as('get', '/console/app.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.headers['content-security-policy']).toBe(policy);
    const styles = await built.as('get', '/console/app.css');
    expect(styles.status).toBe(200);
    expect(styles.headers['content-type']).toMatch(/^text\/css/);
    expect((await built.as('get', '/console/nothing.js')).status).toBe(404);
  });

  it('says how to build it when the bundle is missing', async () => {
    const page = await unbuilt.as('get', '/');
    expect(page.status).toBe(503);
    const { error } = page.body as { error: { code: string; message: string } };
    expect(error.code).toBe('console_not_built');
    expect(error.message).toContain('npm run build');
    expect(page.body).not.toHaveProperty('received');
  });
});
