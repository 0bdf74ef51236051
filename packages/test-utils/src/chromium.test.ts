import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ERROR_CODES, findChromium } from './chromium.js';

describe('findChromium', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-chromium-'));
    await writeFile(join(dir, 'chrome'), '#!/bin/sh\n');
    await chmod(join(dir, 'chrome'), 0o755);
    await writeFile(join(dir, 'not-executable'), '');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes CHROMIUM_PATH when it is an executable file', () => {
    expect(findChromium({ CHROMIUM_PATH: join(dir, 'chrome') })).toBe(join(dir, 'chrome'));
  });

  it.each(['not-executable', 'missing', '.'])(
    'refuses a CHROMIUM_PATH that is not an executable file (%s) rather than use another',
    (name) => {
      expect(() => findChromium({ CHROMIUM_PATH: join(dir, name) })).toThrow(
        expect.objectContaining({ code: CHROMIUM_ERROR_CODES.pathNotExecutable }),
      );
    },
  );

  it("looks on the PATH by name, then at playwright's download, and finds none in an empty PATH", async () => {
    await writeFile(join(dir, 'chromium'), '#!/bin/sh\n');
    await chmod(join(dir, 'chromium'), 0o755);
    const downloaded = () => join(dir, 'chrome');
    expect(findChromium({ PATH: dir }, downloaded)).toBe(join(dir, 'chromium'));
    const empty = join(dir, 'empty');
    expect(findChromium({ PATH: empty }, downloaded)).toBe(join(dir, 'chrome'));
    expect(findChromium({ PATH: empty }, () => join(dir, 'missing'))).toBeUndefined();
  });
});
