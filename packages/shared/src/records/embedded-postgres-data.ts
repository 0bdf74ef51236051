import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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
 * The folder `folder` is made in: a real folder (not a link), ours or root's, and nobody else can
 * swap what is in it (not writable by others, or sticky as the temporary folder is).
 */
async function checkParent(parent: string): Promise<void> {
  await mkdir(parent, { recursive: true, mode: 0o755 });
  const found = await lstat(parent);
  if (found.isSymbolicLink() || !found.isDirectory()) {
    throw new UnsafeDataDirError(`${parent} is not a folder but a link or a file`);
  }
  if (found.uid !== uid() && found.uid !== 0) {
    throw new UnsafeDataDirError(`${parent} belongs to another user (uid ${found.uid})`);
  }
  const othersWrite = (found.mode & 0o022) !== 0;
  if (othersWrite && (found.mode & 0o1000) === 0) {
    throw new UnsafeDataDirError(`${parent} can be written by other users and is not sticky`);
  }
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
 * The embedded PostgreSQL's data folder, `folder` (`npm start`'s is the checkout's
 * `.data/postgres`), checked so that nothing another local user planted is used, nor followed:
 * its parent a real folder nobody else can write into (or sticky), the folder a real one made by
 * this user (or, run as root, by PostgreSQL's), never a link. Refuses otherwise with an
 * `UnsafeDataDirError`. Run as root, PostgreSQL runs as the system user `postgres`, which must get
 * through every folder above; when one is closed to it (a checkout under `/root`), the data goes
 * to a folder made for this start in the temporary folder, removed at stop.
 */
export async function embeddedDataDir(folder: string): Promise<EmbeddedDataDir> {
  await checkParent(dirname(folder));
  const there = await checkFolder(folder);
  if (asRoot() && !(await othersReach(folder))) {
    return { dataDir: await mkdtemp(join(tmpdir(), 'pw-postgres-data-')), kept: false };
  }
  // Made now, by this process, not recursively: it fails if anything appeared there meanwhile.
  if (!there) await mkdir(folder, { mode: 0o700 });
  return { dataDir: folder, kept: true };
}
