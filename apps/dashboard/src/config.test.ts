import { describe, expect, it } from 'vitest';
import { loadDashboardConfig } from './config.js';

describe('dashboard configuration', () => {
  it('DASHBOARD_PUBLIC_URL is optional, and an absolute http(s) address when set', () => {
    expect(loadDashboardConfig({}).DASHBOARD_PUBLIC_URL).toBeUndefined();
    expect(loadDashboardConfig({ DASHBOARD_PUBLIC_URL: '' }).DASHBOARD_PUBLIC_URL).toBeUndefined();
    expect(
      loadDashboardConfig({ DASHBOARD_PUBLIC_URL: 'https://ops.example.com/dashboard/' })
        .DASHBOARD_PUBLIC_URL,
    ).toBe('https://ops.example.com/dashboard/');
    for (const value of ['ops.example.com', '/dashboard', 'ftp://ops.example.com']) {
      expect(() => loadDashboardConfig({ DASHBOARD_PUBLIC_URL: value }), value).toThrow(
        /DASHBOARD_PUBLIC_URL: must be an absolute http\(s\) address/,
      );
    }
  });

  it('DASHBOARD_TRUST_PROXY is a hop count from 0 (the default: the connection’s address) to 10', () => {
    expect(loadDashboardConfig({}).DASHBOARD_TRUST_PROXY).toBe(0);
    expect(loadDashboardConfig({ DASHBOARD_TRUST_PROXY: '' }).DASHBOARD_TRUST_PROXY).toBe(0);
    expect(loadDashboardConfig({ DASHBOARD_TRUST_PROXY: '2' }).DASHBOARD_TRUST_PROXY).toBe(2);
    for (const value of ['-1', '11', 'true', '1.5']) {
      expect(() => loadDashboardConfig({ DASHBOARD_TRUST_PROXY: value }), value).toThrow(
        /DASHBOARD_TRUST_PROXY/,
      );
    }
  });
});

describe('dashboard configuration in production', () => {
  const production = {
    NODE_ENV: 'Production',
    DASHBOARD_USER: 'operator',
    DATABASE_URL: 'postgres://dashboard@127.0.0.1:5432/records',
  };

  it('refuses a password under 16 characters, naming the problem but not the password', () => {
    for (const password of ['a', 'fifteen-chars-x']) {
      let message = '';
      try {
        loadDashboardConfig({ ...production, DASHBOARD_PASSWORD: password });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe(
        `Invalid configuration:\n  - DASHBOARD_PASSWORD: is ${password.length} characters long; production needs at least 16`,
      );
    }
    expect(() => loadDashboardConfig({ ...production, DASHBOARD_PASSWORD: '' })).toThrow(
      /DASHBOARD_PASSWORD: is required in production/,
    );
  });

  it('takes one of 16 characters or more; outside production any length', () => {
    const password = 'sixteen-chars-xy';
    expect(loadDashboardConfig({ ...production, DASHBOARD_PASSWORD: password }).password).toBe(
      password,
    );
    expect(loadDashboardConfig({ DASHBOARD_PASSWORD: 'a' }).password).toBe('a');
  });
});
