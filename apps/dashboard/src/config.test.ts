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
