// The embedded PostgreSQL of `npm start`, a real server in a temporary folder: only the apps' role
// gets in from outside its socket folder, with the password of this start, and it is no superuser.
import { existsSync } from 'node:fs';
import { chmod, chown, lchown, mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import type { EmbeddedPostgresServer } from './embedded-postgres.js';

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs `sql` as the user of `connection`; the rows, or the error's message. */
async function query(connection: string | pg.ClientConfig, sql: string): Promise<unknown[]> {
  const client = new pg.Client(connection);
  await client.connect();
  try {
    return (await client.query<Record<string, unknown>>(sql)).rows;
  } finally {
    await client.end();
  }
}

const refusal = (connection: string) =>
  query(connection, 'select 1').then(
    () => 'accepted',
    (error: Error) => error.message,
  );

let dataDir: string;
let port: number;
let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'pw-embedded-postgres-'));
  port = await freePort();
});
afterAll(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
}, 30_000);

describe('the embedded PostgreSQL', { timeout: 90_000 }, () => {
  it('gives the apps a role that is no superuser, owns its database and cannot COPY … TO PROGRAM', async () => {
    server = await startEmbeddedPostgres({ dataDir, port });
    const url = new URL(server.url);
    expect([url.username, url.hostname, url.pathname]).toEqual([
      'partner_webhooks',
      '127.0.0.1',
      '/partner_webhooks',
    ]);
    expect(url.password.length).toBeGreaterThanOrEqual(32);
    expect(
      await query(
        server.url,
        `select r.rolsuper, pg_get_userbyid(d.datdba) as owner from pg_roles r, pg_database d
         where r.rolname = current_user and d.datname = current_database()`,
      ),
    ).toEqual([{ rolsuper: false, owner: 'partner_webhooks' }]);
    // The recorder migrates: the owner creates tables.
    await query(server.url, 'create table kept (id int)');
    const marker = join(dataDir, 'copy-to-program-ran');
    await expect(query(server.url, `copy (select 1) to program 'touch ${marker}'`)).rejects.toThrow(
      /external program/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('listens on loopback only, its socket in a folder only its own user can enter', async () => {
    const { socketDir } = server!;
    const folder = await stat(socketDir);
    expect(folder.mode & 0o777).toBe(0o700);
    // The user PostgreSQL runs as owns its data folder (as root, the `postgres` system user).
    expect(folder.uid).toBe((await stat(dataDir)).uid);
    expect(existsSync(join(socketDir, `.s.PGSQL.${port}`))).toBe(true);
    expect(await query(server!.url, 'show listen_addresses')).toEqual([
      { listen_addresses: '127.0.0.1' },
    ]);
  });

  it('refuses its superuser over TCP, postgres/postgres included', async () => {
    for (const password of ['postgres', 'password', '']) {
      expect(await refusal(`postgres://postgres:${password}@127.0.0.1:${port}/postgres`)).toMatch(
        /pg_hba\.conf rejects connection|no pg_hba\.conf entry/,
      );
    }
  });
});

// These restart the server the tests above started (the file's tests run in order).
describe('the embedded PostgreSQL, started again', { timeout: 90_000 }, () => {
  it('on a data folder of an earlier run with the old credentials, sets a new password at every start', async () => {
    const first = server!;
    // What an earlier run left: a superuser password everyone knew.
    const superuser = { host: first.socketDir, port, user: 'postgres', database: 'postgres' };
    await query(superuser, "alter role postgres password 'postgres'");
    await first.stop();
    server = undefined;
    expect(existsSync(first.socketDir)).toBe(false);

    server = await startEmbeddedPostgres({ dataDir, port });
    expect(server.url).not.toBe(first.url);
    expect(await refusal(first.url)).toMatch(/password authentication failed/);
    expect(await query(server.url, 'select count(*)::int as n from kept')).toEqual([{ n: 0 }]);
    expect(
      await query(
        { host: server.socketDir, port, user: 'postgres', database: 'postgres' },
        "select rolpassword is null as none from pg_authid where rolname = 'postgres'",
      ),
    ).toEqual([{ none: true }]);
  });

  it("a client waiting for it over TCP meets nothing listening until this start's password is set, never a refusal of it", async () => {
    await server?.stop();
    server = undefined;
    // The apps' password of the start to come, known in advance (as a waiting recorder has it).
    const password = 'the-next-start';
    const url = `postgres://partner_webhooks:${password}@127.0.0.1:${port}/partner_webhooks`;
    const seen = new Set<string>();
    let waiting = true;
    const client = (async () => {
      while (waiting) {
        const answer = await refusal(url);
        seen.add(answer.startsWith('connect ECONNREFUSED') ? 'refused connection' : answer);
        if (answer === 'accepted') return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    server = await startEmbeddedPostgres({ dataDir, port, password });
    await client;
    waiting = false;
    // Nothing listening, or PostgreSQL starting up: what a waiting client waits out.
    const waitedOut = ['accepted', 'refused connection', 'the database system is starting up'];
    expect([...seen].filter((answer) => !waitedOut.includes(answer))).toEqual([]);
    expect(seen).toContain('accepted');
  });
});

/** Why a start on `dataDir` is refused (a server that starts is stopped, and fails the test). */
const refusedStart = async (dataDir: string) => {
  try {
    const started = await startEmbeddedPostgres({ dataDir, port: await freePort() });
    await started.stop();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`started on ${dataDir}`);
};
/** How many socket folders the temporary folder holds: a refused start leaves none. */
const socketFolders = async () =>
  (await readdir(tmpdir())).filter((name) => name.startsWith('pw-postgres-socket-')).length;

// Its data folder: nothing another local user planted is used or followed (docs/records.md).
const asRoot = process.getuid?.() === 0;
const made: string[] = [];
/** A new folder in the temporary folder, removed after the file's tests. */
const folder = async (name: string) => {
  const path = await mkdtemp(join(tmpdir(), `pw-pg-${name}-`));
  made.push(path);
  return path;
};
afterAll(async () => {
  for (const path of made) await rm(path, { recursive: true, force: true });
});

describe('the embedded PostgreSQL’s data folder', { timeout: 90_000 }, () => {
  it('is never a link planted in its place: refused, and what it points to is left alone', async () => {
    const parent = await folder('parent');
    const target = await folder('target');
    const before = await stat(target);
    await symlink(target, join(parent, 'postgres'));
    const sockets = await socketFolders();
    for (const asked of [join(parent, 'postgres'), `${join(parent, 'postgres')}/`]) {
      expect(await refusedStart(asked)).toMatch(
        /postgres is a link or a file, not a data folder this user made/,
      );
    }
    const after = await stat(target);
    expect([after.uid, after.gid, after.mode]).toEqual([before.uid, before.gid, before.mode]);
    expect(await readdir(target)).toEqual([]);
    expect(await socketFolders()).toBe(sockets);
  });

  it('is never in a folder others can write into (the shared temporary folder is sticky)', async () => {
    const open = await folder('open');
    await chmod(open, 0o777);
    expect(await refusedStart(join(open, 'postgres'))).toMatch(
      /can be written by other users and is not sticky/,
    );
  });
});

describe('the embedded PostgreSQL’s data folder, run as root', { timeout: 90_000 }, () => {
  it.runIf(asRoot)('is never a folder another user made first (run as root)', async () => {
    const parent = await folder('parent');
    await mkdir(join(parent, 'postgres'));
    await chown(join(parent, 'postgres'), 4242, 4242);
    const sockets = await socketFolders();
    expect(await refusedStart(join(parent, 'postgres'))).toMatch(
      /postgres belongs to another user \(uid 4242\)/,
    );
    // Nothing was handed to that user: no socket folder, no access rules.
    expect(await socketFolders()).toBe(sockets);
  });

  it.runIf(asRoot)(
    'is never below a folder of another user, nor reached through their link (run as root)',
    async () => {
      const theirs = await folder('theirs');
      await chown(theirs, 4242, 4242);
      expect(await refusedStart(join(theirs, 'checkout', 'postgres'))).toMatch(
        /pw-pg-theirs-\w+ belongs to another user \(uid 4242\)/,
      );
      // Nothing was made in it.
      expect(await readdir(theirs)).toEqual([]);
      const ours = await folder('ours');
      const planted = join(await folder('links'), 'planted');
      await symlink(ours, planted);
      await lchown(planted, 4242, 4242);
      expect(await refusedStart(join(planted, 'postgres'))).toMatch(
        /planted is a link of another user \(uid 4242\)/,
      );
      expect(await readdir(ours)).toEqual([]);
    },
  );

  it.runIf(asRoot)(
    'run as root under a folder closed to PostgreSQL’s user, is a folder of this start, removed at stop',
    async () => {
      const closed = await folder('closed');
      await chmod(closed, 0o700);
      const own = await startEmbeddedPostgres({
        dataDir: join(closed, 'checkout', '.data', 'postgres'),
        port: await freePort(),
      });
      try {
        expect(own.kept).toBe(false);
        expect(own.dataDir.startsWith(join(tmpdir(), 'pw-postgres-data-'))).toBe(true);
        expect(await query(own.url, 'select 1 as one')).toEqual([{ one: 1 }]);
      } finally {
        await own.stop();
      }
      expect(existsSync(own.dataDir)).toBe(false);
      expect(existsSync(join(closed, 'checkout', '.data', 'postgres'))).toBe(false);
    },
  );
});
