/**
 * Placing a call, for every surface (the webhook, the API, campaigns): the guarded insert that
 * stores the call, its first timeline event, its `call.queued` event and its dispatch job in one
 * statement (repository.ts `insertQueuedCalls`), the calling-hours hold, and `place`, which retries
 * with a fresh read of the agent when the guard refused a cached one.
 */
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import type { ApiError } from '../core/errors.js';
import { type AnswerRecorder, recordAnswer } from '../core/idempotency/answer.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { newId } from '../core/ids.js';
import { coalesce } from '../core/jobs/batching.js';
import { isOnDoNotCallList } from '../do-not-call/repository.js';
import { callCreatedRow } from './audit.js';
import { nextOpening } from './calling-hours.js';
import type { TriggerInput } from './input.js';
import { insertQueuedCalls, type QueuedCallInsert, scheduleQueuedCall } from './repository.js';
import type { QueuedCall } from './schemas.js';
import { renderTemplate } from './template.js';
import type { CachedWebhookTarget } from './webhook-targets.js';

export const DISPATCH_QUEUE = 'calls.dispatch';
export const DISPATCH_MAX_ATTEMPTS = 8;

/** Calls per shared statement: bounds its parameter (each call carries its rendered prompt). */
const SHARED_INSERT_BATCH = 50;

/** A statement the database refused for its data or a constraint (SQLSTATE class 22 or 23). */
const refusedForItsData = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
};

export function createCallPlacement(deps: {
  db: Db;
  clock: Clock;
  idempotency: IdempotencyStore;
  /** The telephony engine's name, shown on each call. */
  engine: string;
  /** Told after each queued call (wakes this process's worker). */
  onQueued?: (() => void) | undefined;
}) {
  const { db, clock, idempotency } = deps;

  /** One call's guarded insert, alone: in a transaction, or run again apart from its batch. */
  const insertAlone = async (executor: Executor, entry: QueuedCallInsert) =>
    (await insertQueuedCalls(executor, [entry], deps.engine))[0];

  /**
   * Calls placed outside a transaction (no Idempotency-Key) in the same turn of the event loop share
   * one guarded statement, so a burst of triggers costs one round trip and one commit per batch, not
   * per call; each request still answers only once its call is durably stored. A statement the
   * database refused for its data (SQLSTATE class 22 or 23: nothing was stored) runs again call by
   * call, so one bad call fails alone; any other error (a lost connection: the outcome unknown) is
   * every caller's, never retried, so no call is stored twice.
   */
  const insertShared = coalesce(async (entries: QueuedCallInsert[]) => {
    try {
      return (await insertQueuedCalls(db, entries, deps.engine)).map((stored) => ({ stored }));
    } catch (error) {
      if (entries.length === 1 || !refusedForItsData(error)) throw error;
      return Promise.all(
        entries.map((entry) =>
          insertAlone(db, entry).then(
            (stored) => ({ stored }),
            (failure: unknown) => ({ failure }),
          ),
        ),
      );
    }
  }, SHARED_INSERT_BATCH);

  /**
   * Stores the call for `target` with the guarded insert, in `executor` (shared with concurrent
   * calls when that is the database itself, not a transaction); undefined when the guard refused it
   * (nothing stored), which says only that `target` is no longer current.
   */
  async function insert(
    executor: Executor,
    webhookId: string | null,
    target: CachedWebhookTarget,
    input: TriggerInput,
  ): Promise<QueuedCall | undefined> {
    const createdAt = clock.now();
    const id = newId('call');
    const entry: QueuedCallInsert = {
      webhookId,
      call: {
        id,
        tenantId: target.tenant_id,
        agentId: target.agent_id,
        agentVersion: target.published_version,
        userId: target.user_id,
        from: target.phone_number,
        to: input.phone,
        name: input.name,
        email: input.email,
        context: input.context,
        prompt: renderTemplate(target.prompt, input.templateValues),
        welcomeMessage: renderTemplate(target.welcome_message, input.templateValues),
        createdAt,
      },
      job: {
        queue: DISPATCH_QUEUE,
        payload: { callId: id, tenantId: target.tenant_id },
        maxAttempts: DISPATCH_MAX_ATTEMPTS,
      },
      audit: callCreatedRow(target.tenant_id, id, input.auditFields, createdAt),
    };
    let stored: Awaited<ReturnType<typeof insertAlone>>;
    if (executor === db) {
      const outcome = await insertShared(entry);
      if ('failure' in outcome) throw outcome.failure;
      stored = outcome.stored;
    } else {
      stored = await insertAlone(executor, entry);
    }
    if (!stored) return undefined;
    // Outside its calling hours the call waits, and shows until when (dispatch checks again).
    const hours = stored.settings.calling_hours;
    if (hours) {
      const opens = nextOpening(createdAt, hours);
      if (opens > createdAt) await scheduleQueuedCall(executor, target.tenant_id, id, opens);
    }
    return {
      id,
      status: 'queued',
      agent_id: target.agent_id,
      from: target.phone_number,
      to: input.phone,
      created_at: createdAt.toISOString(),
    };
  }

  /**
   * The one way a call is placed, for both surfaces: the guarded insert with `target` (cached or just
   * read), its stored answer and audit entry in one transaction; `refresh` re-reads a refused agent.
   */
  async function place<Result>(options: {
    webhookId: string | null;
    input: TriggerInput;
    cached?: CachedWebhookTarget;
    refresh: () => Promise<CachedWebhookTarget>;
    doNotCall: () => ApiError;
    /** The answer when the agent kept changing under every attempt. */
    exhausted: () => ApiError;
    answer: (executor: Executor, queued: QueuedCall) => Promise<Result>;
    recorder?: AnswerRecorder<Result>;
    accepted?: (target: CachedWebhookTarget) => void;
    rejected?: (target: CachedWebhookTarget) => void;
  }): Promise<Result> {
    const attempt = async (target: CachedWebhookTarget): Promise<Result | undefined> => {
      const run = async (executor: Executor) => {
        const queued = await insert(executor, options.webhookId, target, options.input);
        if (!queued) return undefined;
        const result = await options.answer(executor, queued);
        await recordAnswer(idempotency, executor, options.recorder, result);
        return result;
      };
      const result = options.recorder ? await db.transaction().execute(run) : await run(db);
      if (result === undefined) {
        options.rejected?.(target);
        return undefined;
      }
      options.accepted?.(target);
      deps.onQueued?.();
      return result;
    };
    let target = options.cached;
    // A concurrent change (rotation, publish, block, debit) can invalidate the target between the read
    // and the guarded insert; read again and answer from the fresh state. When the fresh read finds
    // nothing to refuse, the guard refused for the do-not-call list (or a change that came and went).
    for (let round = 0; round < 3; round++) {
      const refused = target !== undefined;
      if (target) {
        const result = await attempt(target);
        if (result !== undefined) return result;
      }
      if (round === 2) break;
      target = await options.refresh();
      if (refused && (await isOnDoNotCallList(db, target.tenant_id, options.input.phone))) {
        throw options.doNotCall();
      }
    }
    throw options.exhausted();
  }

  return { insert, place };
}
