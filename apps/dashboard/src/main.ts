// Composition root of the dashboard: the only place that reads the environment.
import { configOrExit } from '@pw/shared/config';
import { createLogger, exitOnFatal, onShutdownSignals } from '@pw/shared/runtime';
import { loadDashboardConfig } from './config.js';
import { runDashboard } from './run-dashboard.js';

const config = configOrExit('dashboard', () => loadDashboardConfig(process.env));
const log = createLogger({ name: 'dashboard', level: config.LOG_LEVEL });
// The signals are handled from the start: one that comes while it starts stops it once started.
const dashboard = runDashboard(config, log, exitOnFatal(log));
onShutdownSignals(log, async (signal) => (await dashboard).stop(signal));
await dashboard;
