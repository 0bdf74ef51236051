// The health-check commands of docker-compose.yml and the Dockerfile
// (`node deploy/healthcheck.mjs PORT_VARIABLE DEFAULT_PORT /path`, or no arguments and the three
// in the image's ENV), run the way Docker runs them in a container: from the image's WORKDIR
// (/app, here the repository root) with the container's environment, judged by the exit code.
import { execFile } from 'node:child_process';
import { healthcheckCommand, inherited, parseStages } from './dockerfile.js';
import { imageEnvironment } from './image-layout.js';
import { readRepoFile, repoRoot } from './repo.js';

/** The script every health check runs, relative to the images' WORKDIR (/app). */
export const HEALTHCHECK_SCRIPT = 'deploy/healthcheck.mjs';

/**
 * The exec-form command of the HEALTHCHECK the image of the Dockerfile's `target` runs, its own or
 * its stage's parent's, as written: the app images' has no arguments (their ENV gives them).
 */
export function dockerfileHealthcheckCommand(target: string): string[] {
  const instruction = inherited(parseStages(readRepoFile('Dockerfile')), target, 'HEALTHCHECK');
  const command = instruction && healthcheckCommand(instruction);
  if (!command) throw new Error(`the Dockerfile's ${target} target has no exec-form HEALTHCHECK`);
  return command;
}

/**
 * The same check with its arguments (`node deploy/healthcheck.mjs PORT_VARIABLE DEFAULT_PORT
 * /path`): where the command has none, those the script takes from the image's ENV.
 */
export function dockerfileHealthcheck(target: string): string[] {
  const command = dockerfileHealthcheckCommand(target);
  if (command.length > 2) return command;
  const env = imageEnvironment(parseStages(readRepoFile('Dockerfile')), target);
  return [
    ...command,
    ...['HEALTHCHECK_PORT_VARIABLE', 'HEALTHCHECK_DEFAULT_PORT', 'HEALTHCHECK_PATH'].map(
      (name) => env[name] ?? '',
    ),
  ];
}

/**
 * Runs a `node …` health-check command from the repository root (the images' /app), or from `cwd`,
 * with `env` added; resolves with its exit code.
 */
export function runHealthCheck(
  command: string[],
  env: Record<string, string>,
  cwd: string = repoRoot,
): Promise<number> {
  const [file, ...args] = command;
  if (file !== 'node') throw new TypeError(`health checks here run node, not ${file}`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, env: { ...process.env, ...env }, timeout: 10_000 },
      (error) => resolve(error ? Number(error.code ?? 1) : 0),
    );
  });
}
