import type { z } from 'zod';
import { envEnum, envList, envRequiredList } from './env.js';

/** The shortest signing secret production accepts: 256 bits, the size of the HMAC's key block. */
export const MIN_SECRET_BYTES = 32;

/** In production every secret must be long, and none the public development secret. */
function checkProductionSecrets(secrets: string[], ctx: z.RefinementCtx): void {
  secrets.forEach((secret, index) => {
    const which = secrets.length > 1 ? `secret ${index + 1} of ${secrets.length}` : 'the secret';
    if (secret === DEV_WEBHOOK_SECRET) {
      ctx.addIssue({
        code: 'custom',
        message: `${which} is the public development secret "${DEV_WEBHOOK_SECRET}" (it signs the published examples)`,
      });
    } else if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `${which} is ${Buffer.byteLength(secret)} bytes long; production needs at least ${MIN_SECRET_BYTES} (for example: openssl rand -hex 32)`,
      });
    }
  });
}

/**
 * The signing variables shared by the ingress (which verifies) and `npm run send` (which signs).
 * In production a missing secret and `SIGNATURE_MODE=off` are errors, reported with the rest.
 */
export function signingEnv(production: boolean) {
  const mode = envEnum(['required', 'off'], 'required');
  return {
    WEBHOOK_SECRETS: (production
      ? envRequiredList('is required in production (comma-separated signing secrets)').superRefine(
          checkProductionSecrets,
        )
      : envList()
    ).meta({
      description:
        'comma-separated signing secrets; the first signs, all verify (rotation). In production each must be at least 32 bytes and none `dev-secret`',
      default: 'dev: `dev-secret`, with a warning',
    }),
    SIGNATURE_MODE: (production
      ? mode.refine((value) => value !== 'off', 'cannot be "off" in production')
      : mode
    ).meta({ description: '`required` or `off` (not in production; a warning at start)' }),
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
