import { parseArgs } from 'node:util';
import { FAULTS } from './faults.js';
import type { FaultName } from './faults.js';

export interface SoakOptions {
  webhooks: number;
  rate: number;
  faults: FaultName[];
  fsync: 'always' | 'everysec';
  report?: string;
  /** `RECORD_TTL_SECONDS` of the apps: Redis's memory is measured once it has passed. */
  recordTtlSeconds: number;
  /** The longest the system may take to drain after the last event (seconds). */
  drainSeconds: number;
}

export const USAGE =
  'usage: npm run soak -- [--webhooks N] [--rate R] [--faults all|none|LIST] [--fsync always|everysec] [--report FILE] [--record-ttl SECONDS] [--drain SECONDS]';

const positive = (name: string, text: string | undefined, fallback: number): number => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

/** The soak's options from its command line; throws (naming the option) on one it cannot use. */
export function parseSoakArgs(argv: readonly string[]): SoakOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      webhooks: { type: 'string' },
      rate: { type: 'string' },
      faults: { type: 'string' },
      fsync: { type: 'string' },
      report: { type: 'string' },
      'record-ttl': { type: 'string' },
      drain: { type: 'string' },
    },
    strict: true,
  });
  const listed = values.faults ?? 'all';
  const faults =
    listed === 'all'
      ? [...FAULTS]
      : listed === 'none'
        ? []
        : listed.split(',').map((name) => {
            if (!(FAULTS as readonly string[]).includes(name)) {
              throw new Error(`--faults: no fault ${name}; the faults: ${FAULTS.join(', ')}`);
            }
            return name as FaultName;
          });
  const fsync = values.fsync ?? 'always';
  if (fsync !== 'always' && fsync !== 'everysec') {
    throw new Error('--fsync must be always or everysec');
  }
  return {
    webhooks: Math.round(positive('--webhooks', values.webhooks, 20_000)),
    rate: positive('--rate', values.rate, 100),
    faults,
    fsync,
    ...(values.report ? { report: values.report } : {}),
    recordTtlSeconds: Math.round(positive('--record-ttl', values['record-ttl'], 30)),
    drainSeconds: positive('--drain', values.drain, 300),
  };
}
