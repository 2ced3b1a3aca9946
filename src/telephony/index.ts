/** Picks the telephony adapter named by TELEPHONY (decisions.md §1). */
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Db } from '../core/db.js';
import type { TelephonyAdapter } from './port.js';
import { createSimulatedTelephony } from './simulated.js';

export function createTelephony(config: Config, deps: { db: Db; clock: Clock }): TelephonyAdapter {
  switch (config.telephony) {
    case 'simulated':
      return createSimulatedTelephony({
        db: deps.db,
        clock: deps.clock,
        callSeconds: config.simulatedCallSeconds,
        realtime: config.simulatedRealtime,
      });
  }
}

export type { TelephonyAdapter } from './port.js';
