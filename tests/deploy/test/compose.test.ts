// docker-compose.yml against the Compose Specification's schema and the contract.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { loadCompose, portMappings } from '../src/compose.js';
import type { ComposeService } from '../src/compose.js';
import { knownAppVariables } from '../src/contract.js';
import { parseStages } from '../src/dockerfile.js';
import { parseEnvFile } from '../src/env-file.js';
import { dockerfileHealthcheck, HEALTHCHECK_SCRIPT } from '../src/health-check.js';
import { asRecord, readRepoFile, repoFileExists } from '../src/repo.js';

const APPS = ['ingress', 'worker', 'recorder', 'dashboard'] as const;
const PORT_VARIABLE = {
  ingress: 'INGRESS_PORT',
  worker: 'WORKER_HEALTH_PORT',
  recorder: 'RECORDER_HEALTH_PORT',
  dashboard: 'DASHBOARD_PORT',
} as const;
/** The apps that use the record store (docs/records.md). */
const RECORD_STORE_APPS = ['recorder', 'dashboard'] as const;

const { compose, raw, uses } = loadCompose();
const services = compose.services;
const service = (name: string): ComposeService => {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};
const envExample = parseEnvFile(readRepoFile('.env.example'));

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema, before and after interpolation', () => {
    const schema = JSON.parse(
      readFileSync(new URL('../schemas/compose-spec.json', import.meta.url), 'utf8'),
    ) as Record<string, unknown>;
    // The file names its draft-07 meta-schema by an https address Ajv does not know by that name.
    delete schema.$schema;
    // strictTypes off: the schema itself puts `additionalProperties` beside `type: array` (gpus).
    const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
    const validate = ajv.compile(schema);
    for (const document of [raw, compose]) {
      const valid = validate(document);
      expect(validate.errors ?? [], ajv.errorsText(validate.errors)).toEqual([]);
      expect(valid).toBe(true);
    }
    // The schema is strict about keys: a misspelt one is refused.
    const misspelt = structuredClone(compose) as unknown as Record<string, Record<string, object>>;
    misspelt.services!.ingress = { ...misspelt.services!.ingress, helthcheck: {} };
    expect(validate(misspelt)).toBe(false);
  });

  it('has the contract services: redis, postgres, keycloak, ingress, worker, recorder, dashboard', () => {
    for (const name of ['redis', 'postgres', 'keycloak', ...APPS])
      expect(services).toHaveProperty(name);
  });

  it('builds each app from its own Dockerfile target', () => {
    const targets = new Set(parseStages(readRepoFile('Dockerfile')).map((stage) => stage.name));
    for (const name of [...APPS, 'partner-api']) {
      expect(service(name).build).toEqual({ context: '.', target: name });
      expect(targets).toContain(name);
    }
  });
});

describe('docker-compose.yml: Redis and PostgreSQL', () => {
  it('runs Redis 7 with the append-only file, fsync every second, on a named volume', () => {
    const redis = service('redis');
    expect(redis.image).toMatch(/^redis:7(\.|$)/);
    expect(redis.command?.join(' ')).toContain('--appendonly yes');
    expect(redis.command?.join(' ')).toContain('--appendfsync everysec');
    const volume = redis.volumes?.find((mount) => mount.endsWith(':/data'));
    expect(volume, 'a volume on /data').toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(volume!.split(':')[0]);
    expect(redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('runs PostgreSQL 17 (the record store) on a named volume, healthy once it accepts connections', () => {
    const postgres = service('postgres');
    expect(postgres.image).toBe('postgres:17-alpine');
    const environment = postgres.environment ?? {};
    for (const variable of ['POSTGRES_DB', 'POSTGRES_USER', 'POSTGRES_PASSWORD'])
      expect(environment[variable], variable).toMatch(/^\S+$/);
    // The image's data folder for PostgreSQL 17, on a volume declared at the top level.
    const volume = postgres.volumes?.find((mount) => mount.endsWith(':/var/lib/postgresql/data'));
    expect(volume, 'a volume on /var/lib/postgresql/data').toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(volume!.split(':')[0]);
    // pg_isready over TCP, as its own user and database.
    const check = postgres.healthcheck?.test ?? [];
    expect(check.slice(0, 2)).toEqual(['CMD', 'pg_isready']);
    const option = (flag: string) => check[check.indexOf(flag) + 1];
    expect(option('-h')).toBe('127.0.0.1');
    expect(option('-U')).toBe(environment.POSTGRES_USER);
    expect(option('-d')).toBe(environment.POSTGRES_DB);
    expect(postgres.ports).toBeUndefined();
  });

  it('points the recorder and the dashboard at the postgres service, with its credentials', () => {
    const check = (env: Record<string, string>) => {
      const { services: resolved } = loadCompose(env).compose;
      const postgres = resolved.postgres!.environment!;
      for (const app of RECORD_STORE_APPS) {
        const url = new URL(resolved[app]!.environment!.DATABASE_URL!);
        expect(url.protocol, app).toBe('postgres:');
        expect(url.hostname, app).toBe('postgres');
        expect(url.port || '5432', app).toBe('5432');
        expect(decodeURIComponent(url.username), app).toBe(postgres.POSTGRES_USER);
        expect(decodeURIComponent(url.password), app).toBe(postgres.POSTGRES_PASSWORD);
        expect(url.pathname, app).toBe(`/${postgres.POSTGRES_DB}`);
      }
    };
    check({});
    // Changing the database's settings changes the apps' connection string with them.
    check({ POSTGRES_DB: 'records', POSTGRES_USER: 'someone', POSTGRES_PASSWORD: 'long-secret' });
    // DATABASE_URL itself names another PostgreSQL.
    const elsewhere = 'postgres://pw:secret@db.example.internal:5432/pw';
    for (const app of RECORD_STORE_APPS) {
      const { services: resolved } = loadCompose({ DATABASE_URL: elsewhere }).compose;
      expect(resolved[app]!.environment!.DATABASE_URL).toBe(elsewhere);
    }
    // The apps that do not use the record store are not given it.
    for (const app of APPS.filter(
      (name) => !(RECORD_STORE_APPS as readonly string[]).includes(name),
    ))
      expect(service(app).environment, app).not.toHaveProperty('DATABASE_URL');
  });
});

describe('docker-compose.yml: Keycloak', () => {
  it('runs a pinned Keycloak that imports the partner realm and reports its health', () => {
    const keycloak = service('keycloak');
    expect(keycloak.image).toMatch(/^quay\.io\/keycloak\/keycloak:\d+\.\d+\.\d+$/);
    expect(keycloak.command).toEqual(['start-dev', '--import-realm']);
    expect(keycloak.environment?.KC_HEALTH_ENABLED).toBe('true');
    const mount = keycloak.volumes?.find((volume) =>
      volume.includes(':/opt/keycloak/data/import/'),
    );
    expect(mount).toBe(
      './deploy/keycloak/partner-realm.json:/opt/keycloak/data/import/partner-realm.json:ro',
    );
    expect(repoFileExists('deploy/keycloak/partner-realm.json')).toBe(true);
    expect(keycloak.healthcheck?.test.join(' ')).toContain('/health/ready');
  });

  it('imports a realm whose confidential service-account client is the one the worker uses', () => {
    const realm = JSON.parse(readRepoFile('deploy/keycloak/partner-realm.json')) as {
      realm: string;
      enabled: boolean;
      clients: Record<string, unknown>[];
    };
    const worker = service('worker').environment!;
    expect(realm.realm).toBe('partner');
    expect(realm.realm).toBe(worker.AUTH_REALM);
    expect(realm.enabled).toBe(true);
    const client = realm.clients.find((candidate) => candidate.clientId === worker.AUTH_CLIENT_ID);
    expect(client, `client ${worker.AUTH_CLIENT_ID}`).toBeDefined();
    expect(client).toMatchObject({
      clientId: 'partner-webhooks',
      enabled: true,
      publicClient: false,
      serviceAccountsEnabled: true,
      standardFlowEnabled: false,
      secret: worker.AUTH_CLIENT_SECRET,
    });
  });
});

describe('docker-compose.yml: ports and health checks', () => {
  it('publishes the ingress on 3000 and the dashboard on 3001, where the apps listen', () => {
    expect(portMappings(service('ingress'))).toEqual([[3000, 3000]]);
    expect(portMappings(service('dashboard'))).toEqual([[3001, 3001]]);
    expect(service('ingress').environment?.INGRESS_PORT).toBe('3000');
    expect(service('dashboard').environment?.DASHBOARD_PORT).toBe('3001');
    // Worker replicas would clash on a published port; the recorder's only serves health checks.
    expect(service('worker').ports).toBeUndefined();
    expect(service('recorder').ports).toBeUndefined();
  });

  it('gives every app a health check on its own port variable, and waits for healthy dependencies', () => {
    for (const app of APPS) {
      const check = service(app).healthcheck?.test ?? [];
      expect(check.slice(0, 4)).toEqual(['CMD', 'node', HEALTHCHECK_SCRIPT, PORT_VARIABLE[app]]);
      // The image's check, but the ingress is healthy here only when ready (Redis reachable).
      const image = dockerfileHealthcheck(app);
      expect(check.slice(1)).toEqual(
        app === 'ingress' ? [...image.slice(0, -1), '/readyz'] : image,
      );
      expect(Object.keys(service(app).depends_on ?? {})).toContain('redis');
    }
    expect(Object.keys(service('worker').depends_on ?? {})).toEqual(
      expect.arrayContaining(['redis', 'keycloak', 'partner-api']),
    );
    for (const app of RECORD_STORE_APPS)
      expect(Object.keys(service(app).depends_on ?? {}), app).toContain('postgres');
    for (const [name, entry] of Object.entries(services)) {
      for (const [dependency, condition] of Object.entries(entry.depends_on ?? {})) {
        expect(condition, `${name} -> ${dependency}`).toEqual({ condition: 'service_healthy' });
        expect(service(dependency).healthcheck, `${dependency} has a health check`).toBeDefined();
      }
    }
  });

  it("checks the partner-API stand-in's health route as its image does, on its port variable", () => {
    const check = service('partner-api').healthcheck?.test ?? [];
    expect(check.slice(0, 4)).toEqual(['CMD', 'node', HEALTHCHECK_SCRIPT, 'SANDBOX_API_PORT']);
    expect(check.at(-1)).toBe('/__sandbox/health');
    expect(check.slice(1)).toEqual(dockerfileHealthcheck('partner-api'));
  });
});

describe('docker-compose.yml: settings', () => {
  it('points the apps at the compose services by default', () => {
    const worker = service('worker').environment!;
    for (const app of APPS) expect(service(app).environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(worker.AUTH_URL).toBe('http://keycloak:8080');
    expect(worker.API_BASE_URL).toBe('http://partner-api:3011');
    expect(portMappings(service('partner-api'))).toEqual([[3011, 3011]]);
  });

  it('keeps finished jobs an hour in Redis (RECORD_TTL_SECONDS) and history 90 days in PostgreSQL', () => {
    for (const app of ['ingress', 'worker', 'dashboard'])
      expect(service(app).environment?.RECORD_TTL_SECONDS, app).toBe('3600');
    expect(service('recorder').environment?.RECORD_RETENTION_DAYS).toBe('90');
  });

  it('lets the worker replicas be set from WORKER_REPLICAS', () => {
    expect(service('worker').deploy?.replicas).toBe('1');
    expect(loadCompose({ WORKER_REPLICAS: '4' }).compose.services.worker?.deploy?.replicas).toBe(
      '4',
    );
  });

  it('gives the apps only variables the contract or docs/configuration.md defines', () => {
    const known = knownAppVariables();
    for (const name of [...APPS, 'partner-api']) {
      for (const variable of Object.keys(service(name).environment ?? {}))
        expect(known, `${name}: ${variable}`).toContain(variable);
    }
  });

  it('takes every setting from a variable with a default, each listed in .env.example', () => {
    const listed = new Map(envExample.map((entry) => [entry.name, entry]));
    const used = new Set(uses.map((use) => use.name));
    for (const use of uses) {
      expect(use.fallback, `\${${use.name}} has a default`).toBeDefined();
      const entry = listed.get(use.name);
      expect(entry, `.env.example lists ${use.name}`).toBeDefined();
      expect(entry!.value, `${use.name}: the same default`).toBe(use.fallback);
      expect(entry!.comment, `${use.name} has a comment`).not.toBe('');
    }
    expect([...listed.keys()].filter((name) => !used.has(name))).toEqual([]);
    // Every app setting is a variable, not a constant (the Keycloak image's own are constants).
    const rawServices = asRecord(raw.services, 'services');
    for (const app of APPS) {
      const environment = asRecord(asRecord(rawServices[app], app).environment, app);
      for (const [variable, value] of Object.entries(environment))
        expect(String(value), `${app}: ${variable}`).toMatch(/^\$\{[A-Z_]+:-/);
    }
  });
});
