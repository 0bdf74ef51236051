import type { RunCommand } from './run-command.js';

/** An outside program the tests use, and how to get it when it is missing. */
export interface Program {
  /** What its lines start with: `chromium`, `prometheus`. */
  name: string;
  /**
   * Where it is (its binaries' paths), or undefined when it is missing. It throws, with a message
   * saying what to change, when it is configured wrongly: then nothing is installed.
   */
  find: () => string | undefined;
  /** Debian's package that brings it, installed as root with `apt-get`. */
  debianPackage?: string;
  /** The npm registry's way to get it, tried when Debian's cannot be used or failed. */
  npmWay?: { line: string; command: readonly [string, ...string[]] };
  /** What to install, said when it is missing and could not be installed. */
  hint: string;
}

export interface EnsureDeps {
  /** Whether Debian's packages can be installed here: root, with `apt-get` on the PATH. */
  canUseApt: boolean;
  run: RunCommand;
  /** Where the lines for the person running the tests go. */
  say: (line: string) => void;
}

/** `apt-get install`, with `apt-get update` run once before the first install that needs it. */
export class AptGet {
  private updated = false;

  constructor(private readonly run: RunCommand) {}

  /** Installs Debian's `name`: undefined when it did, else why not. */
  install(name: string): string | undefined {
    if (!this.updated) {
      const failed = this.run('apt-get', ['update', '-qq']);
      if (failed !== undefined) return failed;
      this.updated = true;
    }
    return this.run('apt-get', ['install', '-y', '-qq', name]);
  }
}

interface Way {
  name: string;
  line: string;
  install: () => string | undefined;
}

function waysFor(program: Program, deps: EnsureDeps, apt: AptGet): Way[] {
  const ways: Way[] = [];
  const debian = program.debianPackage;
  if (debian && deps.canUseApt) {
    ways.push({
      name: 'apt-get',
      line: `installing Debian's ${debian} package (apt-get install ${debian})`,
      install: () => apt.install(debian),
    });
  }
  const npm = program.npmWay;
  if (npm) {
    const [command, ...args] = npm.command;
    ways.push({ name: 'npm', line: npm.line, install: () => deps.run(command, args) });
  }
  return ways;
}

/**
 * Makes sure `program` is there: the one found (named in one line), else installed by the first
 * of its ways that works (Debian's package as root with apt-get, else its npm-registry package),
 * each try said in one line. Returns where it is, or undefined after one line saying what to
 * install.
 */
export function ensureProgram(
  program: Program,
  deps: EnsureDeps,
  apt = new AptGet(deps.run),
): string | undefined {
  const { name } = program;
  const { say } = deps;
  let found: string | undefined;
  try {
    found = program.find();
  } catch (error) {
    say(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  if (found) {
    say(`${name}: using ${found}`);
    return found;
  }
  const failures: string[] = [];
  for (const way of waysFor(program, deps, apt)) {
    say(`${name}: ${failures.at(-1) ?? 'none found'}; ${way.line}`);
    const failed = way.install();
    const path = failed === undefined ? program.find() : undefined;
    if (path) return path;
    failures.push(`${way.name} failed: ${failed ?? 'still none found afterwards'}`);
  }
  const tried = failures.length > 0 ? ` and none could be installed (${failures.join('; ')})` : '';
  say(`${name}: none found${tried}; ${program.hint}`);
  return undefined;
}

/** ensureProgram for each of `programs`, in order, sharing one apt-get; true when all are there. */
export function ensurePrograms(programs: readonly Program[], deps: EnsureDeps): boolean {
  const apt = new AptGet(deps.run);
  // Every program is looked at, so one run names everything that is missing.
  const found = programs.map((program) => ensureProgram(program, deps, apt));
  return found.every((path) => path !== undefined);
}
