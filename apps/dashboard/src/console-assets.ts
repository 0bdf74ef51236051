import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import helmet from 'helmet';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';

/**
 * The console's policy: scripts, styles, images and API calls from the dashboard itself only, no
 * inline script or style attribute, no frames. uPlot styles its canvas through the CSSOM, which
 * `style-src 'self'` allows.
 */
const CONSOLE_POLICY = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    frameAncestors: ["'none'"],
    formAction: ["'self'"],
  },
});

/**
 * The operator console (docs/console.md) at `/`: the page and its bundle, built into
 * `directory` by `build-console.ts`. Without a bundle, `/` says how to build one.
 */
export function consoleAssets(directory: string): express.Router {
  const router = express.Router();
  router.use(['/', '/console'], CONSOLE_POLICY);
  router.get('/', (_req, res) => {
    const page = join(directory, 'index.html');
    if (!existsSync(page)) {
      return sendError(
        res,
        503,
        DASHBOARD_ERROR_CODES.consoleNotBuilt,
        'The console is not built: run `npm run build` (npm start builds it itself)',
      );
    }
    res.sendFile(page);
  });
  router.use(
    '/console',
    express.static(join(directory, 'console'), { index: false, fallthrough: true }),
  );
  return router;
}
