import { randomBytes } from 'node:crypto';

// The soak's system runs for up to half an hour: never with the public development secret or a
// fixed dashboard password, even on loopback. Both are made up for the run, once per soak process,
// so that an app restarted by a fault gets the same ones.

/** The signing secret of this run: the apps' `WEBHOOK_SECRETS`, and what the traffic signs with. */
export const SOAK_WEBHOOK_SECRET = randomBytes(32).toString('base64url');

/** The dashboard's account for this run. */
export const SOAK_DASHBOARD = { user: 'soak', password: randomBytes(24).toString('base64url') };
