import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '@pw/shared/records';
import type { EmbeddedPostgresOptions, EmbeddedPostgresServer } from '@pw/shared/records';
import { forgetReapedProcess, reapProcessWithTestRun } from './reaper.js';

/**
 * An embedded PostgreSQL (startEmbeddedPostgres) that dies with the test run, however the run
 * ends, as a ChildRun does. Its package starts the server in the test process's own group, so its
 * postmaster is given to the reaper by its pid, which the data folder's `postmaster.pid` names.
 */
export async function startTestPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresServer> {
  const server = await startEmbeddedPostgres(options);
  const pid = await postmasterPid(server.dataDir);
  reapProcessWithTestRun(pid);
  return {
    ...server,
    async stop() {
      await server.stop();
      forgetReapedProcess(pid);
    },
  };
}

/** The pid of the server running on `dataDir`, from its `postmaster.pid`. */
export async function postmasterPid(dataDir: string): Promise<number> {
  const pid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster pid in ${dataDir}`);
  return pid;
}
