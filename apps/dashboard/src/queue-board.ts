import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type express from 'express';
import type { Queue } from 'bullmq';
import type { AuditLog, Logger } from '@pw/shared';
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

/** The queue board (bull-board) for `/admin/queues`, behind its audit log. */
export function queueBoard(
  queues: readonly Queue[],
  log: Logger,
  audit: Pick<AuditLog, 'record'>,
): express.RequestHandler[] {
  const board = new ExpressAdapter();
  board.setBasePath('/admin/queues');
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, BOARD_QUEUE_OPTIONS)),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'partner-webhooks' }, handlerHooks: boardHooks },
  });
  // bull-board's router is an Express app of its own, with Express's default X-Powered-By.
  const boardApp = board.getRouter() as express.Express;
  boardApp.disable('x-powered-by');
  return [boardAudit(log, audit), boardApp];
}
