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
});
