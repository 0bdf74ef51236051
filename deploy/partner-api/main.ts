// `partner-api` in docker-compose.yml: the sandbox's partner-API stand-in, listening on every
// interface of its container on SANDBOX_API_PORT (3011). GET /__sandbox/calls lists the calls it
// received; GET /__sandbox/health is for the health check.
//
// A call without a bearer token gets 401, but any token will do: in compose the worker's tokens
// come from Keycloak, and the stand-in can recognise only the sandbox identity provider's own
// (`verifyTokens` looks a token up in that provider's memory).
import { PartnerApiStandIn } from '../../packages/sandbox/src/partner-api.js';

const api = await PartnerApiStandIn.start({
  host: '0.0.0.0',
  port: Number(process.env.SANDBOX_API_PORT || 3011),
  verifyToken: () => Promise.resolve(true),
});
console.log(
  JSON.stringify({
    level: 'info',
    time: new Date().toISOString(),
    name: 'partner-api',
    msg: 'partner API stand-in listening (bearer tokens required, not verified)',
    port: Number(new URL(api.baseUrl).port),
  }),
);

const stop = () => void api.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
