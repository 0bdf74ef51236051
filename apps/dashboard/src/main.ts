// Composition root of the dashboard: the only place that reads the environment. `main.js
// partitions [COUNT]` runs the partitions command instead (partitions-command.ts).
import { configOrExit } from '@pw/shared/config';
import { createLogger, exitOnFatal, onShutdownSignals } from '@pw/shared/runtime';
import { loadDashboardConfig } from './config.js';
import { runPartitionsCommand } from './partitions-command.js';
import { runDashboard } from './run-dashboard.js';

async function startDashboard(): Promise<void> {
  const config = configOrExit('dashboard', () => loadDashboardConfig(process.env));
  const log = createLogger({ name: 'dashboard', level: config.LOG_LEVEL });
  // The signals are handled from the start: one that comes while it starts stops it once started.
  const dashboard = runDashboard(config, log, exitOnFatal(log));
  onShutdownSignals(log, async (signal) => (await dashboard).stop(signal));
  await dashboard;
}

if (process.argv[2] === 'partitions') {
  process.exitCode = await runPartitionsCommand(process.argv.slice(3), process.env, (line) =>
    process.stdout.write(`${line}\n`),
  );
} else {
  await startDashboard();
}
