import { chromium } from 'playwright-core';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { findOnPath, isExecutableFile } from './find-program.js';

export const CHROMIUM_ERROR_CODES = {
  pathNotExecutable: 'chromium_path_not_executable',
  notFound: 'chromium_not_found',
} as const;

/** The names a Chromium or Chrome is installed under, looked for on the `PATH` in this order. */
export const CHROMIUM_NAMES = [
  'chromium',
  'chromium-browser',
  'google-chrome',
  'google-chrome-stable',
] as const;

/** What this machine needs: run as root, no GPU, and no traffic of the browser's own. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
] as const;

export type ChromiumErrorCode = (typeof CHROMIUM_ERROR_CODES)[keyof typeof CHROMIUM_ERROR_CODES];

/**
 * No usable Chromium: `CHROMIUM_PATH` is wrong, or none is installed. Shaped like @pw/shared's
 * PwError but not one, so that the step `npm test` runs first loads nothing of the system.
 */
export class ChromiumError extends Error {
  override name = 'ChromiumError';

  constructor(
    readonly code: ChromiumErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Playwright's own downloaded browser (`playwright-core install chromium`), where it would be. */
export function playwrightChromium(): string | undefined {
  try {
    return chromium.executablePath();
  } catch {
    return undefined; // a platform playwright has no build for
  }
}

/**
 * The Chromium to drive: `CHROMIUM_PATH` when set (a ChromiumError when it is not an executable
 * file, rather than quietly using another), else the first of CHROMIUM_NAMES on the `PATH`, else
 * playwright's own download where it exists; undefined when there is none.
 */
export function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  downloaded: () => string | undefined = playwrightChromium,
): string | undefined {
  const configured = env.CHROMIUM_PATH;
  if (configured) {
    if (isExecutableFile(configured)) return configured;
    throw new ChromiumError(
      CHROMIUM_ERROR_CODES.pathNotExecutable,
      `CHROMIUM_PATH=${configured} is not an executable file: point it at a Chromium or Chrome, or unset it`,
    );
  }
  for (const name of CHROMIUM_NAMES) {
    const found = findOnPath(name, env.PATH);
    if (found) return found;
  }
  const playwrights = downloaded();
  return playwrights && isExecutableFile(playwrights) ? playwrights : undefined;
}

/** A headless Chromium (the one findChromium finds) for a browser test; the caller closes it. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) {
    throw new ChromiumError(
      CHROMIUM_ERROR_CODES.notFound,
      'No Chromium found: run `npx tsx scripts/ensure-test-programs.ts` at the repository root ' +
        '(`npm test` does), or set CHROMIUM_PATH',
    );
  }
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
}

/** Turns a CSP violation, which Chromium reports as an event on the document, into a console error. */
const REPORT_CSP_VIOLATIONS = `document.addEventListener('securitypolicyviolation', (event) => {
  console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI);
});`;

/**
 * A page of a new context of `browser` (made with `options`; closing it is the caller's), whose
 * console errors, page errors and CSP violations are pushed to `problems` as they come: a test
 * expects it empty at the end.
 */
export async function watchedPage(
  browser: Browser,
  options: BrowserContextOptions,
  problems: string[],
): Promise<Page> {
  const context = await browser.newContext(options);
  await context.addInitScript({ content: REPORT_CSP_VIOLATIONS });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`${message.text()} ${message.location().url}`);
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return page;
}
