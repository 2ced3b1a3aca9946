import type { Executor } from '../core/db/database.js';
import { defineJob, type JobDefinition } from '../core/jobs/definitions.js';
import type { TelephonyAdapter } from '../telephony/port.js';
import type { ConfigDefaults } from './config.js';
import { EngineSyncPayload } from './schemas.js';
import { ENGINE_SYNC_QUEUE, findPublishedVersion } from './service.js';

/**
 * The voice engine's copy of each published version: with an engine that keeps agents of its own
 * (Retell), a publish queues the sync, and the job gives the engine the version as it was frozen.
 */
export function agentJobs(deps: {
  db: Executor;
  /** `syncAgentVersion` is absent for engines that take the agent with every call (the simulator, Vapi). */
  telephony: Pick<TelephonyAdapter, 'syncAgentVersion'>;
  /** The voice and model of versions published before configurations existed. */
  operatorDefaults: ConfigDefaults;
}): JobDefinition[] {
  return [
    defineJob({
      queue: ENGINE_SYNC_QUEUE,
      payload: EngineSyncPayload,
      handle: async (job) => {
        const { tenantId, agentId, version } = job.payload;
        const published = await findPublishedVersion(
          deps.db,
          tenantId,
          agentId,
          version,
          deps.operatorDefaults,
        );
        if (published) await deps.telephony.syncAgentVersion?.(published);
      },
    }),
  ];
}
