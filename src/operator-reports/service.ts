/**
 * The operator console's reports (docs/operator-console.md): tenants by name or id, one tenant's
 * counts, the engine's calls by ending and the calls that went quiet, the job queues and their
 * failed jobs (which the operator may put back in line).
 */
import { writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import { type Db, isUniqueViolation } from '../core/db/database.js';
import { ApiError, notFound } from '../core/errors.js';
import {
  callsByEngine,
  engineCostByTenant,
  failedJobs,
  queueDepths,
  requeueFailedJob,
  searchTenants,
  silentCalls,
  tenantCounts,
} from './repository.js';

/** A call dialing this long without news is stuck (a dial answers within a minute or two). */
export const STUCK_DIALING_MS = 10 * 60 * 1000;
/** A call in progress this long without news is stuck (longer than any call the platform allows). */
export const STUCK_IN_PROGRESS_MS = 2 * 60 * 60 * 1000;
/** A call placed with an engine that has not reported for this long: its callback is late or lost. */
export const LATE_CALLBACK_MS = 15 * 60 * 1000;
const LIST_LIMIT = 50;

export const monthStartOf = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));

export function createOperatorReports(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const ago = (ms: number) => new Date(clock.now().getTime() - ms);

  return {
    async searchTenants(query: { q?: string; page: number; limit: number }) {
      const q = query.q?.trim() || undefined;
      const { rows, total } = await searchTenants(db, q, query.limit, (query.page - 1) * query.limit);
      return { rows, total };
    },

    async tenantCounts(tenantId: string) {
      return tenantCounts(db, tenantId, monthStartOf(clock.now()));
    },

    /** Engine cost (USD) per tenant of the calls of a UTC month `YYYY-MM`. */
    async engineCosts(period: string) {
      const [year, month] = period.split('-').map(Number);
      return engineCostByTenant(
        db,
        new Date(Date.UTC(year, month - 1, 1)),
        new Date(Date.UTC(year, month, 1)),
      );
    },

    async engines(days = 7) {
      return {
        since: ago(days * 24 * 60 * 60 * 1000),
        endings: await callsByEngine(db, ago(days * 24 * 60 * 60 * 1000)),
        lateCallbacks: await silentCalls(
          db,
          ['dialing', 'in_progress'],
          ago(LATE_CALLBACK_MS),
          true,
          LIST_LIMIT,
        ),
        stuckDialing: await silentCalls(db, ['dialing'], ago(STUCK_DIALING_MS), false, LIST_LIMIT),
        stuckInProgress: await silentCalls(db, ['in_progress'], ago(STUCK_IN_PROGRESS_MS), false, LIST_LIMIT),
      };
    },

    async jobs() {
      return { queues: await queueDepths(db, clock.now()), failed: await failedJobs(db, LIST_LIMIT) };
    },

    async retryJob(jobId: string): Promise<void> {
      if (!/^\d{1,18}$/.test(jobId)) throw notFound('Failed job');
      try {
        const now = clock.now();
        const requeued = await writeAudited(
          db,
          (executor) => requeueFailedJob(executor, jobId, now),
          (done) =>
            done && {
              action: 'job.retried',
              tenantId: null,
              objectType: 'job',
              objectId: jobId,
              fields: [],
              at: now,
            },
        );
        if (!requeued) throw notFound('Failed job');
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ApiError(
            'conflict',
            'The same work is already queued; this failed job is not needed again.',
          );
        }
        throw error;
      }
    },
  };
}

export type OperatorReports = ReturnType<typeof createOperatorReports>;
