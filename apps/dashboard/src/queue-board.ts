import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type express from 'express';
import type { Queue } from 'bullmq';
import type { AuditLog } from '@pw/shared/records';
import type { Logger } from '@pw/shared/runtime';
import { boardAudit } from './board-audit.js';
import { boardHooks } from './board-guard.js';

/**
 * The board's buttons: not read-only (that would refuse retry too), and retry offered for failed
 * jobs only. bull-board has no switch per button, so the refused ones still show and answer with
 * a "Forbidden" toast. `allowCompletedRetries` is read by bull-board's BaseAdapter but missing
 * from BullMQAdapter's option type.
 */
const BOARD_QUEUE_OPTIONS: ConstructorParameters<typeof BullMQAdapter>[1] & {
  allowCompletedRetries: boolean;
} = { readOnlyMode: false, allowCompletedRetries: false };

/**
 * The board's adapter of each queue. Queues of one name in several partitions (the `actions`
 * queue of each) show one each, as `actions · 3`, named `p3.actions` in the board's addresses;
 * a queue of one partition keeps its own name.
 */
function adapters(queues: readonly Queue[]): BullMQAdapter[] {
  const named = new Map<string, number>();
  for (const queue of queues) named.set(queue.name, (named.get(queue.name) ?? 0) + 1);
  const seen = new Map<string, number>();
  return queues.map((queue) => {
    if (named.get(queue.name) === 1) return new BullMQAdapter(queue, BOARD_QUEUE_OPTIONS);
    const partition = seen.get(queue.name) ?? 0;
    seen.set(queue.name, partition + 1);
    return new BullMQAdapter(queue, {
      ...BOARD_QUEUE_OPTIONS,
      prefix: `p${partition}.`,
      displayName: `${queue.name} · ${partition}`,
    });
  });
}

/**
 * The queue board (bull-board) for `/admin/queues`, behind its audit log; `queues` in partition
 * order.
 */
export function queueBoard(
  queues: readonly Queue[],
  log: Logger,
  audit: Pick<AuditLog, 'record'>,
): express.RequestHandler[] {
  const board = new ExpressAdapter();
  board.setBasePath('/admin/queues');
  createBullBoard({
    queues: adapters(queues),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'partner-webhooks' }, handlerHooks: boardHooks },
  });
  // bull-board's router is an Express app of its own, with Express's default X-Powered-By.
  const boardApp = board.getRouter() as express.Express;
  boardApp.disable('x-powered-by');
  return [boardAudit(log, audit), boardApp];
}
