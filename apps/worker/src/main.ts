// Composition root of the worker: the only place that reads the environment.
import { configOrExit } from '@pw/shared/config';
import { createLogger, exitOnFatal, onShutdownSignals } from '@pw/shared/runtime';
import { loadWorkerConfig } from './config.js';
import { runWorker } from './run-worker.js';

const config = configOrExit('worker', () => loadWorkerConfig(process.env));
const log = createLogger({ name: 'worker', level: config.LOG_LEVEL });
// The signals are handled from the start: one that comes while it starts stops it once started.
const worker = runWorker(config, log, exitOnFatal(log));
onShutdownSignals(log, async (signal) => (await worker).stop(signal));
await worker;
