// deploy/prometheus/: the rules pass `promtool check rules`, the compose Prometheus's config
// `promtool check config`, and the unit tests beside them (each alert fires on synthetic series
// and resolves) `promtool test rules`. Without promtool the test fails with one line saying what to
// install: it never passes by skipping.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const PROMETHEUS = fileURLToPath(new URL('../../../deploy/prometheus/', import.meta.url));

/** promtool's output, or a failure with one line saying how to get promtool. */
async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: PROMETHEUS });
    return stdout + stderr;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'promtool is not installed: install Debian\'s "prometheus" package (apt-get install prometheus)',
        { cause: error },
      );
    }
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

describe('deploy/prometheus', { timeout: 60_000 }, () => {
  it('holds valid recording and alerting rules, and a valid Prometheus config', async () => {
    const rules = await promtool('check', 'rules', 'recording-rules.yml', 'alerts.yml');
    // Every rule written in each file is one promtool found.
    const written = (file: string) =>
      (readFileSync(`${PROMETHEUS}${file}`, 'utf8').match(/^\s*- (record|alert): /gm) ?? []).length;
    expect(rules).toContain(`SUCCESS: ${written('recording-rules.yml')} rules found`);
    expect(rules).toContain(`SUCCESS: ${written('alerts.yml')} rules found`);
    expect(await promtool('check', 'config', 'prometheus.yml')).toContain('SUCCESS');
  });

  it('every alert fires on its synthetic series and resolves (promtool test rules)', async () => {
    expect(await promtool('test', 'rules', 'tests/alerts.test.yml')).toContain('SUCCESS');
  });
});
