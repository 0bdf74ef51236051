import express from 'express';
import type { Router } from 'express';
import type { AuditLog } from '@pw/shared/records';
import type { Logger } from '@pw/shared/runtime';
import { BOARD_ACTIONS } from './board-guard.js';

/** What one audit line says about a board action, besides the user and the outcome. */
interface BoardAuditEntry {
  action: string;
  route: string;
  queue: string;
  job_id?: string;
  job_status?: string;
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Mounted in front of bull-board's router: once a state-changing call to the board is answered,
 * one line with `audit: true` says who (the basic-auth user), what (the allow-listed route, its
 * queue, job id or job status) and how it ended; refused calls (403) are logged as refused. The
 * hooks inside bull-board see neither Express's `res.locals` nor the final answer, so this sits
 * outside. Done actions go to the audit log (a log line and the record store's audit entries).
 */
export function boardAudit(log: Logger, audit: Pick<AuditLog, 'record'>): Router {
  const router = express.Router();
  /** The action's audit entry, once whichever of its two paths comes first. */
  const recordAction = (res: express.Response, entry: BoardAuditEntry) => {
    if (res.locals.boardAudited === true) return;
    res.locals.boardAudited = true;
    const { action, ...details } = entry;
    void audit.record(
      {
        user: String(res.locals.user),
        action,
        target: entry.job_id ?? entry.queue,
        details: { ...details, status: res.statusCode, answered: res.writableFinished },
      },
      'board action',
    );
  };
  router.use((req, res, next) => {
    if (READ_METHODS.has(req.method)) return next('router');
    // 'close', not 'finish': bull-board goes on working when the client hangs up before the
    // answer, and that action must be audited too (`answered: false`).
    res.once('close', () => {
      const entry = res.locals.boardAction as BoardAuditEntry | undefined;
      if (entry && res.statusCode < 400) recordAction(res, entry);
      else if (res.statusCode === 403) {
        log.warn(
          {
            audit: true,
            user: res.locals.user as unknown,
            status: res.statusCode,
            answered: res.writableFinished,
            ...entry,
            method: req.method,
            path: req.originalUrl,
          },
          'board action refused',
        );
      }
    });
    next();
  });
  for (const { method, route, action } of BOARD_ACTIONS) {
    router[method](route, (req, res, next) => {
      const { queueName, jobId, queueStatus } = req.params as Record<string, string | undefined>;
      const entry: BoardAuditEntry = {
        action,
        route: `${method.toUpperCase()} ${route}`,
        queue: queueName ?? '',
        ...(jobId === undefined ? {} : { job_id: jobId }),
        ...(queueStatus === undefined ? {} : { job_status: queueStatus }),
      };
      res.locals.boardAction = entry;
      // A client gone while its call waited on the basic auth's check: 'close' came before this
      // router could listen, and bull-board still does the work. Audited now, unanswered.
      if (req.socket.destroyed) recordAction(res, entry);
      // Out of this router to bull-board's, which does the work.
      next('router');
    });
  }
  return router;
}
