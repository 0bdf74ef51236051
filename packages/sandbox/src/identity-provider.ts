import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface SandboxClient {
  clientId: string;
  clientSecret: string;
}

export interface IdentityProviderOptions {
  /** @defaultValue 0 (a free port) */
  port?: number;
  /** @defaultValue `'partner'` */
  realm?: string;
  clients: SandboxClient[];
  /** @defaultValue 300 */
  accessTokenTtlSeconds?: number;
}

export interface IdentityProvider {
  /** `AUTH_URL`: the host, without the realm. */
  baseUrl: string;
  realm: string;
  tokenUrl: string;
  /** Token requests served, granted or refused. */
  readonly tokenRequests: number;
  /** True for a token this provider issued that has not expired. */
  isIssued(token: string): Promise<boolean>;
  /** Stops listening (clients get connection refused) until `resume()`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** oidc-provider set up as a Keycloak realm: the client-credentials grant at Keycloak's token path. */
function keycloakLikeProvider(issuer: string, options: IdentityProviderOptions): Provider {
  return new Provider(issuer, {
    clients: options.clients.map((client) => ({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    clientAuthMethods: ['client_secret_post', 'client_secret_basic'],
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      devInteractions: { enabled: false },
    },
    scopes: ['openid', 'profile', 'email'],
    routes: { token: '/protocol/openid-connect/token' },
    ttl: { ClientCredentials: options.accessTokenTtlSeconds ?? 300 },
  });
}

/**
 * A real OpenID provider (oidc-provider) for the sandbox and the tests, serving the
 * client-credentials grant at Keycloak's path: `{baseUrl}/realms/{realm}/protocol/openid-connect/token`.
 * Its signing keys and cookie secrets are oidc-provider's development ones: never for production.
 */
export async function startIdentityProvider(
  options: IdentityProviderOptions,
): Promise<IdentityProvider> {
  const realm = options.realm ?? 'partner';
  const mount = `/realms/${realm}`;
  let server: Server = createServer();
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;

  const provider = keycloakLikeProvider(`${baseUrl}${mount}`, options);
  let tokenRequests = 0;
  const callback = provider.callback();
  const handler: Parameters<typeof createServer>[1] = (req, res) => {
    if (!req.url?.startsWith(mount)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    if (req.url.startsWith(`${mount}/protocol/openid-connect/token`)) tokenRequests++;
    // oidc-provider finds its mount path from `originalUrl`, as Express sets it.
    (req as typeof req & { originalUrl?: string }).originalUrl = req.url;
    req.url = req.url.slice(mount.length) || '/';
    void callback(req, res);
  };
  server.on('request', handler);

  const listen = async () => {
    server = createServer(handler);
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
  };
  const close = async () => {
    if (!server.listening) return;
    const closed = once(server, 'close');
    server.close();
    server.closeAllConnections();
    await closed;
  };

  return {
    baseUrl,
    realm,
    tokenUrl: `${baseUrl}${mount}/protocol/openid-connect/token`,
    get tokenRequests() {
      return tokenRequests;
    },
    async isIssued(token) {
      const found = await provider.ClientCredentials.find(token);
      return Boolean(found && !found.isExpired);
    },
    pause: close,
    resume: listen,
    stop: close,
  };
}
