// The sandbox on its own (`npm start -w @pw/sandbox`): an OpenID provider and a partner-API
// stand-in for local runs. `npm start` starts it itself when AUTH_URL or API_BASE_URL is unset.
import { startSandbox } from './sandbox.js';

const sandbox = await startSandbox({
  idpPort: Number(process.env.SANDBOX_IDP_PORT || 3010),
  apiPort: Number(process.env.SANDBOX_API_PORT || 3011),
  realm: process.env.AUTH_REALM || undefined,
  clientId: process.env.AUTH_CLIENT_ID || undefined,
  clientSecret: process.env.AUTH_CLIENT_SECRET || undefined,
});
const line = (msg: string, fields: Record<string, string>) =>
  console.log(
    JSON.stringify({
      level: 'info',
      time: new Date().toISOString(),
      name: 'sandbox',
      msg,
      ...fields,
    }),
  );
line('identity provider listening', {
  AUTH_URL: sandbox.env.AUTH_URL,
  AUTH_REALM: sandbox.env.AUTH_REALM,
  AUTH_CLIENT_ID: sandbox.env.AUTH_CLIENT_ID,
});
line('partner API stand-in listening', { API_BASE_URL: sandbox.env.API_BASE_URL });

const stop = () => void sandbox.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
