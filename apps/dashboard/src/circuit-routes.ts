import express from 'express';
import type { CircuitBoard } from '@pw/shared/circuits';
import type { ActionQueues } from '@pw/shared/queue';
import type { AuditLog } from '@pw/shared/records';
import { z } from 'zod';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';

export interface CircuitApiDeps {
  circuits: Pick<CircuitBoard, 'list' | 'view' | 'known' | 'override' | 'wakeHeld'>;
  /** The queues whose jobs a circuit holds (every partition's): closing one wakes them there. */
  actions: ActionQueues;
  audit: Pick<AuditLog, 'record'>;
}

const overrideSchema = z.object({ state: z.enum(['open', 'closed']) });

/**
 * The circuits of the partner targets, mounted at `/api/circuits` behind the operator API's body
 * parsing: read them all, or open or close one by hand. `:target` is the target string
 * percent-encoded (its `/` as `%2F`). The circuit's rules:
 * docs/reliability-and-security.md#outages-the-circuit-breaker.
 */
export function circuitApi(deps: CircuitApiDeps): express.Router {
  const { circuits } = deps;
  const api = express.Router();

  // Each circuit with why it is open and its poison inputs: their count and the 20 newest. No
  // route pages through the rest: each one that never succeeds ends in the dead letters, which
  // an operator filters by action, and the worker keeps only the newest 1000 anyway.
  api.get('/', async (_req, res) => {
    res.json({ circuits: await circuits.list() });
  });

  // A manual open holds the target's actions, with no probes, until an operator closes it; a
  // close (even of a circuit closed already) wakes what it held at once, in the order
  // `CircuitBoard.wakeHeld` gives.
  api.put('/:target', async (req, res) => {
    const { target } = req.params;
    const parsed = overrideSchema.safeParse(req.body);
    if (!parsed.success) {
      return sendError(
        res,
        400,
        DASHBOARD_ERROR_CODES.invalidCircuitState,
        'The body must be { "state": "open" } or { "state": "closed" }; nothing changed',
        parsed.error.issues.map((issue) => ({
          path: issue.path.join('.'),
          message: issue.message,
        })),
      );
    }
    if (!(await circuits.known(target))) {
      return sendError(res, 404, DASHBOARD_ERROR_CODES.notFound, `No circuit ${target}`);
    }
    const { state } = parsed.data;
    const transition = await circuits.override(target, state);
    // The change is made: it is audited even if waking fails (the held jobs then come back on
    // their own after their hold, and the operator gets a 500).
    const waking =
      state === 'closed'
        ? circuits.wakeHeld(target, (jobId) => deps.actions.ofJob(jobId))
        : Promise.resolve(0);
    const woken = await waking.catch(() => null);
    await deps.audit.record(
      {
        user: String(res.locals.user),
        action: 'circuit_override',
        target,
        details: { state, transition, woken },
      },
      'circuit override',
    );
    if (woken === null) await waking;
    res.json({ ...(await circuits.view(target)), transition, woken });
  });

  return api;
}
