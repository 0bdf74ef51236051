import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

/** Where the embedded PostgreSQL keeps its data for this start. */
export interface EmbeddedDataDir {
  dataDir: string;
  /**
   * False for a folder made for this start alone (run as root, PostgreSQL's own user cannot reach
   * the one asked for): removed when the server stops.
   */
  kept: boolean;
}

/** The data folder cannot be used safely: one line saying why. */
export class UnsafeDataDirError extends Error {
  override name = 'UnsafeDataDirError';
}

const uid = (): number => process.getuid?.() ?? -1;
const asRoot = (): boolean => uid() === 0;

/** The uid of the system user `postgres`, which PostgreSQL runs as when started as root. */
function postgresUid(): number | undefined {
  try {
    return Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  } catch {
    return undefined;
  }
}

/** lstat, or undefined when nothing is there. */
async function lstatIfAny(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Every folder from `/` down to `path` (a real path: no link in it): this user's or root's, and
 * nobody else can replace what is in it: not writable by other users (nor by its group, unless
 * that is this user's own), or sticky, as the temporary folder is.
 */
async function checkChain(path: string): Promise<void> {
  for (let at = path; ; at = dirname(at)) {
    const found = await lstat(at);
    if (!found.isDirectory()) throw new UnsafeDataDirError(`${at} is not a folder`);
    if (found.uid !== uid() && found.uid !== 0) {
      throw new UnsafeDataDirError(`${at} belongs to another user (uid ${found.uid})`);
    }
    const othersWrite =
      (found.mode & 0o002) !== 0 ||
      ((found.mode & 0o020) !== 0 && found.gid !== process.getgid?.());
    if (othersWrite && (found.mode & 0o1000) === 0) {
      throw new UnsafeDataDirError(`${at} can be written by other users and is not sticky`);
    }
    if (dirname(at) === at) return;
  }
}

/** Every link on the way to `path` (as given) is this user's or root's: none another user planted. */
async function checkLinks(path: string): Promise<void> {
  for (let at = path; dirname(at) !== at; at = dirname(at)) {
    const found = await lstatIfAny(at);
    if (found?.isSymbolicLink() && found.uid !== uid() && found.uid !== 0) {
      throw new UnsafeDataDirError(`${at} is a link of another user (uid ${found.uid})`);
    }
  }
}

/**
 * The real path of `parent`, every folder on it checked (`checkChain`), the missing ones made by
 * this process one at a time (each fails if something appeared there meanwhile).
 */
async function safeParent(parent: string): Promise<string> {
  await checkLinks(parent);
  let existing = parent;
  const missing: string[] = [];
  while (!(await lstatIfAny(existing))) {
    missing.unshift(basename(existing));
    existing = dirname(existing);
  }
  let real = await realpath(existing);
  await checkChain(real);
  for (const name of missing) {
    real = join(real, name);
    await mkdir(real, { mode: 0o755 });
  }
  return real;
}

/**
 * What is at `folder` already, if anything: a real folder an earlier start made, ours or (run as
 * root) PostgreSQL's user's; never a link, nor another user's. True when there is one.
 */
async function checkFolder(folder: string): Promise<boolean> {
  const found = await lstatIfAny(folder);
  if (!found) return false;
  if (found.isSymbolicLink() || !found.isDirectory()) {
    throw new UnsafeDataDirError(`${folder} is a link or a file, not a data folder this user made`);
  }
  const owners = [uid(), ...(asRoot() ? [postgresUid()] : [])];
  if (!owners.includes(found.uid)) {
    throw new UnsafeDataDirError(`${folder} belongs to another user (uid ${found.uid})`);
  }
  return true;
}

/** True when every folder above `folder` lets other users (PostgreSQL's own, run as root) through. */
async function othersReach(folder: string): Promise<boolean> {
  for (let above = dirname(folder); ; above = dirname(above)) {
    if (((await stat(above)).mode & 0o001) === 0) return false;
    if (dirname(above) === above) return true;
  }
}

/**
 * The embedded PostgreSQL's data folder, `asked` (`npm start`'s is the checkout's
 * `.data/postgres`), checked so that nothing another local user planted is used, nor followed:
 * no link of another user's on the way, every folder above it this user's or root's and writable
 * by nobody else (or sticky), the folder itself a real one made by this user (or, run as root, by
 * PostgreSQL's), never a link. Missing folders above it are made, once checked. Refuses otherwise with an
 * `UnsafeDataDirError`. Run as root, PostgreSQL runs as the system user `postgres`, which must get
 * through every folder above; when one is closed to it (a checkout under `/root`), the data goes
 * to a folder made for this start in the temporary folder, removed at stop.
 */
export async function embeddedDataDir(asked: string): Promise<EmbeddedDataDir> {
  // Absolute, without a trailing slash (through which lstat would follow a link).
  const resolved = resolve(asked);
  const folder = join(await safeParent(dirname(resolved)), basename(resolved));
  const there = await checkFolder(folder);
  if (asRoot() && !(await othersReach(folder))) {
    return { dataDir: await mkdtemp(join(tmpdir(), 'pw-postgres-data-')), kept: false };
  }
  // Made now, by this process, not recursively: it fails if anything appeared there meanwhile.
  if (!there) await mkdir(folder, { mode: 0o700 });
  return { dataDir: folder, kept: true };
}
