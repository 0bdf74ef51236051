// Composition root of the worker: the only place that reads the environment.
import { configOrExit } from '@pw/shared/config';
import { createLogger, exitOnFatal, onShutdownSignals } from '@pw/shared/runtime';
import { loadWorkerConfig } from './config.js';
import { runWorker } from './run-worker.js';

const config = configOrExit('worker', () => loadWorkerConfig(process.env));
const log = createLogger({ name: 'worker', level: config.LOG_LEVEL });
const worker = await runWorker(config, log, exitOnFatal(log));
onShutdownSignals(log, (signal) => worker.stop(signal));
