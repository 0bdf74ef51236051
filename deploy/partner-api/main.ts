// `partner-api` in docker-compose.yml: the sandbox's partner-API stand-in on SANDBOX_API_PORT
// (3011) on every interface. GET /__sandbox/calls lists the calls it received.
import { startPartnerApiServer } from './partner-api-server.js';

const port = Number(process.env.SANDBOX_API_PORT || 3011);
const server = await startPartnerApiServer({ port });
console.log(
  JSON.stringify({
    level: 'info',
    time: new Date().toISOString(),
    name: 'partner-api',
    msg: 'partner API stand-in listening (bearer tokens required, not verified)',
    port: server.port,
  }),
);

const stop = () => void server.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
