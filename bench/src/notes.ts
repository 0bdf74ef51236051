// What the figures of results.json mean, written beside them.
import type { FloodSettings } from './phases/flood.js';
import type { FloodFigures, Notes } from './results.js';

export function benchNotes(flood: FloodSettings, figures: FloodFigures): Notes {
  return {
    worker:
      "Our worker's actions/s include, for every action, a partner-API HTTP call (the sandbox " +
      'answers 200 at once) with a bearer token from the token manager, the outcome-record writes ' +
      'and change notification, and the out-of-order check for state-changing actions (the ' +
      "ingress adds the action jobs itself). The raw no-op worker's jobs do nothing. " +
      "two_workers_ceiling: the machine's cores over one action's CPU (the worker's, Redis's and " +
      "the sandbox's together) over one worker's rate: the most any number of worker processes " +
      'could drain over one on this machine, were CPU the only bound.',
    rss: 'Peak VmRSS from /proc during load; the ingress cluster counts the primary and its children. The sandbox runs under tsx.',
    aof:
      'Both private redis-server processes have the same flags but appendonly; ' +
      'ingress_cost_vs_main_run_pct compares with the main run (another Redis).',
    flood:
      `Legitimate signed webhooks paced evenly at ${flood.legitRate}/s from 127.0.0.1 (latency ` +
      'from when each was due, so a stall counts in full; one given up after ' +
      `${flood.requestTimeoutMs / 1000} s counts as that long, and as failed), first alone, then ` +
      `while unsigned bodies of ${flood.bodyBytes} bytes arrive from ${flood.address} at ` +
      `${flood.offeredPerSecond}/s over ${flood.connections} connections (one due while all are ` +
      'busy is skipped), against one ingress process with ' +
      `INGRESS_RATE_LIMIT=${flood.rateLimit}. Unsigned: no configured secret signed them, but each ` +
      'carries a well-formed forged signature, so that the verifier must compute its digests. The ' +
      `two shapes alternate: many_keys, one object of ${figures.many_keys_members} small keys (refused 413 ` +
      `by the byte scan, unparsed), and long_keys, ${figures.long_keys_members} members (2,000 JSON ` +
      'values) padded by long keys, which is parsed and digested both ways (401). ' +
      "ingress_cpu_ms_*: the ingress's CPU time from /proc per request, its idle share included: " +
      `legitimate ones alone, and each shape alone offered at the limit for ${flood.shapeSeconds} s.`,
    latency:
      "enqueue-to-start: first action job processedOn - the action jobs' timestamp (the ingress adds them at once); ack-to-start: the same " +
      'processedOn - when the load generator received the ack (one machine clock).',
  };
}
