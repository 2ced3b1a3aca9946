/** Picks the telephony adapter named by TELEPHONY (decisions.md §1, platform.md §7). */
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Db } from '../core/db.js';
import type { PublishedAgentVersion, TelephonyAdapter } from './port.js';
import { createSimulatedTelephony } from './simulated.js';

export function createTelephony(
  config: Config,
  deps: {
    db: Db;
    clock: Clock;
    findAgentVersion(
      tenantId: string,
      agentId: string,
      version: number,
    ): Promise<PublishedAgentVersion | undefined>;
  },
): TelephonyAdapter {
  switch (config.telephony) {
    case 'simulated':
      return createSimulatedTelephony({
        db: deps.db,
        clock: deps.clock,
        callSeconds: config.simulatedCallSeconds,
        realtime: config.simulatedRealtime,
      });
    default:
      throw new Error(`TELEPHONY=${config.telephony} is not wired yet`);
  }
}

export type { TelephonyAdapter } from './port.js';
