import { chown, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { scramSha256Verifier } from './scram-verifier.js';

/** The embedded PostgreSQL's superuser, made by initdb. */
const SUPERUSER = 'postgres';

/** The apps' role, and the database it owns (the recorder migrates it). Not a superuser. */
export const EMBEDDED_POSTGRES_ROLE = 'partner_webhooks';

/** Who may connect, and how: written at every start, so an older data folder's rules never apply. */
const HBA = `# Written by partner-webhooks at every start of its embedded PostgreSQL (hba_file): the data
# folder's own pg_hba.conf is not read.
# TYPE  DATABASE  USER  ADDRESS  METHOD
# The superuser only over the Unix socket, whose folder only PostgreSQL's own user can enter.
local   all  ${SUPERUSER}  trust
# The apps' role, by password, over loopback, to its own database; nothing else.
host    ${EMBEDDED_POSTGRES_ROLE}  ${EMBEDDED_POSTGRES_ROLE}  127.0.0.1/32  scram-sha-256
`;

/**
 * The server's settings that keep it to this machine: loopback (or, `tcp` false, no TCP at all),
 * and a socket in `socketDir`.
 */
export const accessFlags = (socketDir: string, tcp = true): string[] => [
  ...['-c', `listen_addresses=${tcp ? '127.0.0.1' : ''}`],
  ...['-c', `unix_socket_directories=${socketDir}`],
  ...['-c', 'unix_socket_permissions=0700'],
  ...['-c', `hba_file=${join(socketDir, 'pg_hba.conf')}`],
];

/**
 * Writes the access rules into `socketDir` (mode 0700, from mkdtemp) and, run as root, gives the
 * folder and the file to `owner`: the user PostgreSQL runs as, who must create its socket there.
 */
export async function writeAccessRules(
  socketDir: string,
  owner: { uid: number; gid: number },
): Promise<void> {
  const file = join(socketDir, 'pg_hba.conf');
  await writeFile(file, HBA, { mode: 0o600 });
  if (process.getuid?.() === 0) {
    await chown(socketDir, owner.uid, owner.gid);
    await chown(file, owner.uid, owner.gid);
  }
}

/**
 * As the superuser (over the socket): takes the superuser's password away (a data folder of an
 * earlier run may have one), makes the apps' role if missing, never a superuser, gives it
 * `password` (as a SCRAM verifier), and its database if missing.
 */
export async function grantAppRole(client: pg.Client, password: string): Promise<void> {
  const role = client.escapeIdentifier(EMBEDDED_POSTGRES_ROLE);
  await client.connect();
  try {
    await client.query(`alter role ${client.escapeIdentifier(SUPERUSER)} password null`);
    const roles = await client.query('select 1 from pg_roles where rolname = $1', [
      EMBEDDED_POSTGRES_ROLE,
    ]);
    if (roles.rowCount === 0) await client.query(`create role ${role}`);
    await client.query(
      `alter role ${role} login nosuperuser nocreatedb nocreaterole noreplication nobypassrls
       password ${client.escapeLiteral(scramSha256Verifier(password))}`,
    );
    const databases = await client.query('select 1 from pg_database where datname = $1', [
      EMBEDDED_POSTGRES_ROLE,
    ]);
    if (databases.rowCount === 0) await client.query(`create database ${role} owner ${role}`);
  } finally {
    await client.end();
  }
}
