import { spawnSync } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';

/** Runs a command quietly: undefined when it succeeded, else one line saying why not. */
export type RunCommand = (command: string, args: readonly string[]) => string | undefined;

/**
 * A RunCommand that runs the real command in `env` (its `PATH` finds the command), output kept
 * back; a failure is told by its exit and its last error line.
 */
export function runQuietly(env: NodeJS.ProcessEnv = process.env): RunCommand {
  return (command, args) => {
    const result = spawnSync(command, args, {
      env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.error) return result.error.message;
    if (result.status === 0) return undefined;
    const lines = stripVTControlCharacters(`${result.stdout}\n${result.stderr}`)
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    // apt-get's errors start with `E:`, node's with `Error:`; else the last thing it said.
    const reason = lines.findLast((line) => /^(E|Error):/.test(line)) ?? lines.at(-1);
    return `exited with ${result.status ?? result.signal}${reason ? `: ${reason}` : ''}`;
  };
}

/** Whether Debian's packages can be installed here: running as root, with a working `apt-get`. */
export const canUseAptGet = (uid: number | undefined, run: RunCommand): boolean =>
  uid === 0 && run('apt-get', ['--version']) === undefined;
