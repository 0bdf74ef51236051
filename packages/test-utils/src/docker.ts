import { existsSync } from 'node:fs';

/** Whether a Docker engine may answer (testcontainers' own check is slower and noisier). */
export const dockerReachable = (env: NodeJS.ProcessEnv = process.env): boolean =>
  Boolean(env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
