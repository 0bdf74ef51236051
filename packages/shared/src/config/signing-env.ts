import { envEnum, envList, envRequiredList } from './env.js';

/**
 * The signing variables shared by the ingress (which verifies) and `npm run send` (which signs).
 * In production a missing secret and `SIGNATURE_MODE=off` are errors, reported with the rest.
 */
export function signingEnv(production: boolean) {
  const mode = envEnum(['required', 'off'], 'required');
  return {
    WEBHOOK_SECRETS: production
      ? envRequiredList('is required in production (comma-separated signing secrets)')
      : envList(),
    SIGNATURE_MODE: production
      ? mode.refine((value) => value !== 'off', 'cannot be "off" in production')
      : mode,
  };
}

export const DEV_WEBHOOK_SECRET = 'dev-secret';

export interface SigningConfig {
  /** The first signs, all verify. */
  webhookSecrets: readonly [string, ...string[]];
  signatureMode: 'required' | 'off';
  /** Development defaults in use, said once at start. */
  warnings: readonly string[];
}

/** Applies the development defaults (a known secret) and says which are in use. */
export function resolveSigning(env: {
  WEBHOOK_SECRETS?: string[] | undefined;
  SIGNATURE_MODE: 'required' | 'off';
}): SigningConfig {
  const warnings: string[] = [];
  const [first, ...rest] = env.WEBHOOK_SECRETS ?? [];
  if (first === undefined) {
    warnings.push(
      'WEBHOOK_SECRETS is not set: using the public development secret (never in production)',
    );
  }
  if (env.SIGNATURE_MODE === 'off')
    warnings.push('SIGNATURE_MODE=off: webhook signatures are NOT verified');
  return {
    webhookSecrets: first === undefined ? [DEV_WEBHOOK_SECRET] : [first, ...rest],
    signatureMode: env.SIGNATURE_MODE,
    warnings,
  };
}
