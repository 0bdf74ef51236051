import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express from 'express';
import type { Router } from 'express';
import { openApiDocument } from '@pw/shared/openapi';

/** Swagger UI's files, as the swagger-ui-dist package ships them. */
const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png'];

// No inline script: the page loads Swagger UI and this initialiser as files, so the dashboard's
// Content-Security-Policy (scripts from its own origin only) stays as it is.
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>partner-webhooks API</title>
    <link rel="stylesheet" href="swagger-ui.css">
    <link rel="icon" type="image/png" href="favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="swagger-ui-bundle.js"></script>
    <script src="init.js"></script>
  </body>
</html>
`;

// "Try it out" stays off: webhooks are signed, so `npm run send` is the way to post one. Nothing is
// fetched from outside (no validator badge).
const INIT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  validatorUrl: null,
  supportedSubmitMethods: [],
});
`;

/**
 * `/docs`: the ingress's OpenAPI document rendered by Swagger UI, and the document itself at
 * `/docs/openapi.json`. The dashboard does not know the ingress's public address, so the
 * document's server is a variable whose default is the local ingress.
 */
export function apiDocs(): Router {
  const router = express.Router({ strict: true });
  // Written on the first request, not at start-up.
  let document: string | undefined;
  const written = () =>
    (document ??= JSON.stringify(
      openApiDocument({
        servers: [
          {
            url: '{ingress}',
            description: 'the ingress',
            variables: {
              ingress: {
                default: 'http://localhost:3000',
                description: 'the ingress base address',
              },
            },
          },
        ],
      }),
    ));
  // Relative asset addresses need the trailing slash. The redirect is relative too, so that it
  // still works behind a proxy that serves the dashboard under a path of its own.
  router.get('/', (req, res) => {
    if (!req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, 'docs/');
    res.type('html').send(PAGE);
  });
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(written());
  });
  router.get('/init.js', (_req, res) => {
    res.type('text/javascript').send(INIT);
  });
  for (const asset of ASSETS) {
    router.get(`/${asset}`, (_req, res) => {
      res.sendFile(join(SWAGGER_UI, asset));
    });
  }
  return router;
}
