// Composition root of the recorder: the only place that reads the environment.
import { configOrExit } from '@pw/shared/config';
import { createLogger, exitOnFatal, onShutdownSignals } from '@pw/shared/runtime';
import { loadRecorderConfig } from './config.js';
import { runRecorder } from './run-recorder.js';

const config = configOrExit('recorder', () => loadRecorderConfig(process.env));
const log = createLogger({ name: 'recorder', level: config.LOG_LEVEL });
const recorder = runRecorder(config, log, exitOnFatal(log));
onShutdownSignals(log, (signal) => {
  log.info({ signal }, 'stopping: finishing the batch in hand');
  return recorder.stop(signal);
});
await recorder.started;
