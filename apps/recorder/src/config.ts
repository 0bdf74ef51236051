import { z } from 'zod';
import {
  commonEnv,
  requiredDatabaseUrlEnv,
  envPort,
  loadConfig,
  recordRetentionEnv,
  recordTtlEnv,
  withCommonChecks,
} from '@pw/shared/config';

/** The recorder's variables, each described: docs/configuration.md is written from them. */
export const recorderVariables = {
  ...commonEnv,
  DATABASE_URL: requiredDatabaseUrlEnv,
  RECORD_RETENTION_DAYS: recordRetentionEnv,
  RECORD_TTL_SECONDS: recordTtlEnv,
  RECORDER_HEALTH_PORT: envPort(3003).meta({
    description: "the recorder's `/healthz` and `/metrics` port",
  }),
};

const recorderEnv = withCommonChecks(z.object(recorderVariables));

export type RecorderConfig = z.output<typeof recorderEnv>;

export const loadRecorderConfig = (env: Record<string, string | undefined>): RecorderConfig =>
  loadConfig(recorderEnv, env);
