import express from 'express';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import { EVENT_REGISTRY } from '@pw/shared/events';
import { selectActions } from '@pw/shared/rules';
import { PwError } from '@pw/shared/runtime';
import type { ErrorCode, EventDefinition } from '@pw/shared/events';
import type { IntakeResult } from '@pw/shared/intake';
import type { RoutingRule } from '@pw/shared/rules';
import type { Logger } from '@pw/shared/runtime';
import { RequestRejectedError, sendError } from './error-response.js';
import type { IngressMetrics } from './metrics.js';
import { parseWebhook } from './parse-webhook.js';
import type { ParseSettings } from './parse-webhook.js';
import type { IncomingWebhook } from './batched-intake.js';

/**
 * Where the routing rules come from: the live rules the dashboard edits (`liveRoutingRules`,
 * live-rules.ts). Read on every request, so `current()` only hands out what it holds.
 */
export interface RulesSource {
  current(): readonly RoutingRule[];
}

export interface WebhookRouteSettings extends ParseSettings {
  maxBodyBytes: number;
  /** Accepted requests per second per sender address; 0 turns the limit off. */
  rateLimitPerSecond: number;
  /** The longest a request waits for Redis before it gets 503. @defaultValue 3000 */
  enqueueTimeoutMs?: number;
}

export interface WebhookRouteDeps {
  intake: { accept(incoming: IncomingWebhook, now: Date): Promise<IntakeResult> };
  rules: RulesSource;
  log: Logger;
  metrics: IngressMetrics;
  /** Per-minute counts of repeats and refusals for the ledger (accepted ones count themselves). */
  counts?: { count(code: string): void };
  settings: WebhookRouteSettings;
  /** The receiver's clock: the freshness window and the time a webhook is taken in. @defaultValue Date.now */
  now?: () => number;
}

/** 415 unless the body is declared `application/json` (UTF-8, the only charset JSON allows). */
const requireJson: RequestHandler = (req, res, next) => {
  const charset = /;\s*charset="?([^";]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  if (!req.is('application/json') || (charset && !/^utf-?8$/i.test(charset))) {
    sendError(
      res,
      new RequestRejectedError('unsupported_media_type', 'Content-Type must be application/json'),
    );
    return;
  }
  next();
};

/** Maps the body reader's errors to the contract's codes. */
function bodyErrors(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large') {
    sendError(
      res,
      new RequestRejectedError('payload_too_large', 'The body is larger than the limit'),
    );
  } else if (type === 'encoding.unsupported') {
    sendError(
      res,
      new RequestRejectedError('unsupported_media_type', 'Unsupported Content-Encoding'),
    );
  } else if (type !== undefined && (error as { status?: number }).status! < 500) {
    sendError(res, new RequestRejectedError('invalid_json', 'The body could not be read'));
  } else {
    next(error);
  }
}

/** Counts and times every answer by event type and outcome. */
function measure(deps: WebhookRouteDeps, eventType: string): RequestHandler {
  const { metrics, counts } = deps;
  return (_req, res, next) => {
    const stop = metrics.ackSeconds.startTimer({ event_type: eventType });
    res.on('finish', () => {
      const outcome = String(res.locals.outcome ?? res.statusCode);
      metrics.received.inc({ event_type: eventType, outcome });
      // Accepted and quarantined webhooks are counted by the intake, in the same step.
      if (outcome !== 'accepted' && outcome !== 'quarantined') counts?.count(outcome);
      stop({ outcome });
    });
    next();
  };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new PwError('unavailable' satisfies ErrorCode, `no answer from Redis in ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function receive(definition: EventDefinition, deps: WebhookRouteDeps): RequestHandler {
  const { intake, rules, log, settings } = deps;
  const timeoutMs = settings.enqueueTimeoutMs ?? 3000;
  const now = deps.now ?? Date.now;
  return async (req, res) => {
    // One reading of the clock per request: the freshness window and the time taken in agree.
    const receivedAt = now();
    let parsed;
    try {
      parsed = parseWebhook(req.body as Buffer, definition, settings, receivedAt);
    } catch (error) {
      if (!(error instanceof RequestRejectedError)) throw error;
      log.info({ event_type: definition.type, code: error.code }, 'webhook rejected');
      sendError(res, error);
      return;
    }
    // A quarantined event (authentic, failing its schema) is kept and sets off no action.
    const actions = parsed.problems
      ? []
      : selectActions(definition.type, parsed.event, rules.current());
    try {
      const { ack, duplicate } = await withDeadline(
        intake.accept({ eventType: definition.type, actions, ...parsed }, new Date(receivedAt)),
        timeoutMs,
      );
      const quarantined = ack.quarantined === true;
      res.locals.outcome = duplicate ? 'duplicate' : quarantined ? 'quarantined' : 'accepted';
      if (quarantined && !duplicate) deps.metrics.quarantined.inc({ event_type: definition.type });
      const fields = {
        webhook_id: ack.webhook_id,
        event_type: definition.type,
        entity_id: parsed.entityId,
        duplicate,
      };
      if (quarantined) {
        log.warn(
          { ...fields, problems: ack.problems },
          'authentic event failed its schema: kept, quarantined (no action runs until released)',
        );
      } else {
        log.info(
          fields,
          duplicate ? 'duplicate delivery answered with the first ack' : 'webhook accepted',
        );
      }
      res.status(quarantined ? 202 : 200).json(ack);
    } catch (error) {
      log.error(
        { err: error, event_type: definition.type },
        'webhook not confirmed by Redis in time: answering 503 (it may still have been enqueued)',
      );
      sendError(
        res,
        new RequestRejectedError(
          'unavailable',
          'The queue did not confirm the webhook in time; it may or may not have been enqueued: retry it (a retry of one that got in is answered as a repeat)',
        ),
      );
    }
  };
}

/** The three webhook endpoints, each: rate limit, 415, 413/400 while reading, then the checks. */
export function webhookRoutes(deps: WebhookRouteDeps): Router {
  const router = express.Router();
  const { settings } = deps;
  const limiter: RequestHandler[] =
    settings.rateLimitPerSecond > 0
      ? [
          rateLimit({
            windowMs: 1000,
            limit: settings.rateLimitPerSecond,
            standardHeaders: 'draft-6',
            legacyHeaders: false,
            validate: { xForwardedForHeader: false },
            handler: (_req, res) =>
              sendError(
                res,
                new RequestRejectedError('rate_limited', 'Too many requests from this sender'),
              ),
          }),
        ]
      : [];
  const readBody = express.raw({ type: () => true, limit: settings.maxBodyBytes });
  for (const definition of Object.values(EVENT_REGISTRY)) {
    router.post(
      definition.path,
      measure(deps, definition.type),
      ...limiter,
      requireJson,
      readBody,
      bodyErrors,
      receive(definition, deps),
    );
    router.all(definition.path, (_req, res) => {
      res.setHeader('Allow', 'POST');
      sendError(res, new RequestRejectedError('method_not_allowed', 'Use POST'));
    });
  }
  return router;
}
