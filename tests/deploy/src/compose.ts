import { interpolateValues } from './interpolate.js';
import type { VariableUse } from './interpolate.js';
import { asRecord, readYaml } from './repo.js';

export interface ComposeService {
  image?: string;
  build?: { context: string; target?: string };
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[]; interval?: string; start_period?: string };
  depends_on?: Record<string, { condition: string }>;
  deploy?: { replicas?: string | number };
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/**
 * docker-compose.yml as `docker compose config` would see it with `env` as the environment:
 * merge keys resolved, variables interpolated; `uses` lists every variable reference.
 */
export function loadCompose(env: Record<string, string | undefined> = {}): {
  compose: ComposeFile;
  raw: Record<string, unknown>;
  uses: VariableUse[];
} {
  const raw = asRecord(readYaml('docker-compose.yml'), 'docker-compose.yml');
  const uses: VariableUse[] = [];
  const compose = interpolateValues(raw, env, uses) as ComposeFile;
  return { compose, raw, uses };
}

/** The service's port mappings as `[published, target]` numbers (short syntax). */
export function portMappings(service: ComposeService): [number, number][] {
  return (service.ports ?? []).map((port) => {
    const match = /^(?:[\d.]+:)?(\d+):(\d+)(?:\/tcp)?$/.exec(String(port));
    if (!match) throw new Error(`unexpected port mapping "${port}"`);
    return [Number(match[1]), Number(match[2])];
  });
}
