// Composition root of the ingress: the only place that reads the environment.
import cluster from 'node:cluster';
import { configOrExit } from '@pw/shared/config';
import { createLogger, exitOnFatal, onShutdownSignals } from '@pw/shared/runtime';
import { runPrimary } from './cluster.js';
import { loadIngressConfig } from './config.js';
import { runIngress } from './run-ingress.js';

const config = configOrExit('ingress', () => loadIngressConfig(process.env));
const log = createLogger({ name: 'ingress', level: config.LOG_LEVEL });

if (cluster.isPrimary) for (const warning of config.warnings) log.warn(warning);
if (config.INGRESS_WORKERS > 1 && cluster.isPrimary) {
  runPrimary(config.INGRESS_WORKERS, log);
} else {
  // The whole ingress, or one of `INGRESS_WORKERS` sharing the port.
  // The signals are handled from the start: one that comes while it starts stops it once started.
  const ingress = runIngress(config, log, exitOnFatal(log));
  onShutdownSignals(log, async (signal) => (await ingress).stop(signal));
  await ingress;
}
