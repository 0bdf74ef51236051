// The documentation that restates code is written from it (`npm run docs`), and the README's
// links lead somewhere.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChildRun, repoRoot } from '@pw/test-utils';
import { readRepoFile } from '../src/repo.js';

describe('docs/', () => {
  it('the generated tables (variables, error codes) match the code: `npm run docs -- --check`', async () => {
    const check = ChildRun.start(
      [process.execPath, '--import', 'tsx', 'scripts/docs.ts', '--check'],
      {},
    );
    const code = await check.exited;
    expect(check.output).toBe('');
    expect(code).toBe(0);
  }, 60_000);

  it('every page the README links to exists', () => {
    const links = [...readRepoFile('README.md').matchAll(/\]\((docs\/[^)#]+)\)/g)].map(
      (m) => m[1]!,
    );
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) expect(existsSync(join(repoRoot, link)), link).toBe(true);
  });
});
