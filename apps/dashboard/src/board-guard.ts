import type { BoardHooks, HookContext } from '@bull-board/api/typings/app';

/** A state-changing board route that stays open: the board's retry, promote, clean and remove. */
export interface BoardAction {
  method: 'put';
  /** The route as bull-board declares it (`node_modules/@bull-board/api/dist/routes.js`). */
  route: string;
  /** The name audit lines carry. */
  action: string;
}

/**
 * The allow-list, in bull-board's own route order (Express matches the first route that fits, so
 * the audit router below names the same route as the board does). Everything else that is not a
 * GET is refused: add job, update data, delay and priority edits, pause/resume, empty, obliterate,
 * concurrency and rate limits, job schedulers, remove-unprocessed-children, and any route a later
 * bull-board adds. A job added or edited through the board would reach the partner API with the
 * worker's bearer token, past every signature and schema check of the ingress.
 */
export const BOARD_ACTIONS: readonly BoardAction[] = [
  { method: 'put', route: '/api/queues/:queueName/retry/:queueStatus', action: 'retry_all' },
  { method: 'put', route: '/api/queues/:queueName/promote', action: 'promote_all' },
  { method: 'put', route: '/api/queues/:queueName/clean/:queueStatus', action: 'clean_all' },
  { method: 'put', route: '/api/queues/:queueName/:jobId/retry', action: 'retry_job' },
  { method: 'put', route: '/api/queues/:queueName/:jobId/clean', action: 'remove_job' },
  { method: 'put', route: '/api/queues/:queueName/:jobId/promote', action: 'promote_job' },
];

const allowed = (method: string, route: string): BoardAction | undefined =>
  BOARD_ACTIONS.find((entry) => entry.method === method && entry.route === route);

/** The one failed job a retry may start again; a completed one would repeat a partner call. */
async function isFailedJob({ request }: HookContext): Promise<boolean> {
  const { queueName, jobId } = request.params as { queueName?: string; jobId?: string };
  const job = await request.queues.get(queueName ?? '')?.getJob(jobId ?? '');
  // An unknown job passes on to bull-board, which answers its own 404.
  return !job || (await job.getState()) === 'failed';
}

/** Why a refused call was refused, as bull-board's UI shows it (a "Forbidden" toast). */
const refusal = (message: string) => ({ allow: false, status: 403 as const, message });

/**
 * bull-board's `handlerHooks`: reads pass, the allow-list passes, the rest is refused with 403 in
 * bull-board's own error shape (`{ error: { key: 'ERRORS.FORBIDDEN' }, message }`), which its UI
 * shows as a toast and then carries on. Retries are of failed jobs only, as the operator API's
 * replays are: retrying a completed action would send its partner call again.
 */
export const boardHooks: BoardHooks = {
  async before(context) {
    if (context.method === 'get') return;
    const action = allowed(context.method, context.route);
    if (!action) {
      return refusal(
        'The queue board cannot create or edit jobs or change queues: only retry, promote, clean and remove are open',
      );
    }
    if (action.action === 'retry_all' && context.request.params.queueStatus !== 'failed') {
      return refusal('Only failed jobs can be retried');
    }
    if (action.action === 'retry_job' && !(await isFailedJob(context))) {
      return refusal('Only failed jobs can be retried');
    }
  },
};
