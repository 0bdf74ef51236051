// The sandbox (identity provider and partner API) in a process of its own, so that its RSS is its
// own and it does not share a thread with the load generator. Started by the bench with `fork`:
// it sends `{ type: 'ready', env }` once listening and answers `'stats'` with its counters. It
// stops when the bench disconnects (the bench exited, however it exited).
import { startSandbox } from '@pw/sandbox';

export interface SandboxReady {
  type: 'ready';
  env: Record<string, string>;
}
export interface SandboxStats {
  type: 'stats';
  tokenRequests: number;
  apiCalls: number;
}

const send = (message: SandboxReady | SandboxStats) => process.send?.(message);

if (!process.send) {
  console.error('sandbox-process: start me with child_process.fork');
  process.exit(2);
}

const sandbox = await startSandbox({ recordCalls: false });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void sandbox.stop().finally(() => process.exit(0));
};
process.on('message', (message) => {
  if (message === 'stats') {
    send({
      type: 'stats',
      tokenRequests: sandbox.idp.tokenRequests,
      apiCalls: sandbox.api.callCount,
    });
  }
});
process.on('disconnect', stop);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
send({ type: 'ready', env: { ...sandbox.env } });
