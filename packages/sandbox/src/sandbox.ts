import { startIdentityProvider } from './identity-provider.js';
import type { IdentityProvider } from './identity-provider.js';
import { PartnerApiStandIn } from './partner-api.js';

export interface SandboxOptions {
  /** @defaultValue 0 (a free port) */
  idpPort?: number;
  /** @defaultValue 0 (a free port) */
  apiPort?: number;
  realm?: string;
  clientId?: string;
  clientSecret?: string;
  accessTokenTtlSeconds?: number;
  /** The partner API accepts only this provider's tokens. @defaultValue true */
  verifyTokens?: boolean;
  /** The partner API keeps every call in `calls`. @defaultValue true */
  recordCalls?: boolean;
}

export interface Sandbox {
  idp: IdentityProvider;
  api: PartnerApiStandIn;
  /** The settings that point the system at this sandbox. */
  env: {
    AUTH_URL: string;
    AUTH_REALM: string;
    AUTH_CLIENT_ID: string;
    AUTH_CLIENT_SECRET: string;
    API_BASE_URL: string;
  };
  stop(): Promise<void>;
}

/** The identity provider and the partner API, the API accepting only the provider's tokens. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const clientId = options.clientId ?? 'partner-webhooks';
  const clientSecret = options.clientSecret ?? 'sandbox-secret';
  const idp = await startIdentityProvider({
    port: options.idpPort ?? 0,
    realm: options.realm ?? 'partner',
    clients: [{ clientId, clientSecret }],
    accessTokenTtlSeconds: options.accessTokenTtlSeconds,
  });
  const api = await PartnerApiStandIn.start({
    port: options.apiPort ?? 0,
    verifyToken: options.verifyTokens === false ? undefined : (token) => idp.isIssued(token),
    recordCalls: options.recordCalls,
  });
  return {
    idp,
    api,
    env: {
      AUTH_URL: idp.baseUrl,
      AUTH_REALM: idp.realm,
      AUTH_CLIENT_ID: clientId,
      AUTH_CLIENT_SECRET: clientSecret,
      API_BASE_URL: api.baseUrl,
    },
    async stop() {
      await Promise.all([api.stop(), idp.stop()]);
    },
  };
}
