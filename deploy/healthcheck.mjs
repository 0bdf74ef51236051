// The health check of the images (the Dockerfile's HEALTHCHECK) and of docker-compose.yml:
//   node deploy/healthcheck.mjs PORT_VARIABLE DEFAULT_PORT PATH
//   node deploy/healthcheck.mjs WORKER_HEALTH_PORT 3002 /healthz
//   node deploy/healthcheck.mjs
// Without arguments, the three come from HEALTHCHECK_PORT_VARIABLE, HEALTHCHECK_DEFAULT_PORT and
// HEALTHCHECK_PATH: the app images share one HEALTHCHECK, and each sets them in its ENV.
// Docker does not expand variables in an exec-form HEALTHCHECK, so this reads the port from the
// named variable of the container's environment (DEFAULT_PORT when it is unset or empty), then
// GETs http://127.0.0.1:<port><PATH> with a 4 s timeout. Exits 0 on a 2xx answer, 1 on anything
// else (another status, no answer, a port that is not a number, missing arguments): never 2,
// which Docker reserves. Plain node, no dependencies: the partner-api image has no node_modules.
/* global process, console, fetch, AbortSignal */

const TIMEOUT_MS = 4000;

/** Says why on stderr (Docker keeps it in the container's health log) and exits 1. */
function fail(reason) {
  console.error(`healthcheck: ${reason}`);
  process.exit(1);
}

const given = process.argv.slice(2);
const { HEALTHCHECK_PORT_VARIABLE, HEALTHCHECK_DEFAULT_PORT, HEALTHCHECK_PATH } = process.env;
const [variable, fallback, path, ...extra] =
  given.length > 0
    ? given
    : [HEALTHCHECK_PORT_VARIABLE, HEALTHCHECK_DEFAULT_PORT, HEALTHCHECK_PATH];
if (!variable || !fallback || !path?.startsWith('/') || extra.length > 0)
  fail(
    'usage: node deploy/healthcheck.mjs PORT_VARIABLE DEFAULT_PORT /path, or no arguments with ' +
      'HEALTHCHECK_PORT_VARIABLE, HEALTHCHECK_DEFAULT_PORT and HEALTHCHECK_PATH set',
  );

const port = process.env[variable] || fallback;
if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
  fail(`${variable}=${JSON.stringify(port)} is not a port`);

const url = `http://127.0.0.1:${Number(port)}${path}`;
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) fail(`${url} answered ${response.status}`);
  process.exit(0);
} catch (error) {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  fail(`${url}: ${cause instanceof Error ? (cause.code ?? cause.message) : String(cause)}`);
}
