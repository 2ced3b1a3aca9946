/** Picks the telephony adapter named by TELEPHONY (docs/design-choices.md, docs/engines.md, docs/engines.md). */
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config/config.js';
import type { Db } from '../core/db/database.js';
import type { PublishedAgentVersion, TelephonyAdapter } from './port.js';
import { createRetellTelephony } from './retell/adapter.js';
import { createSimulatedTelephony } from './simulated.js';
import type { ToolRunner } from './tool-paths.js';
import { createVapiTelephony } from './vapi/adapter.js';

/** loadConfig reads an engine's settings exactly when TELEPHONY names it. */
function configured<T>(settings: T | undefined, engine: string): T {
  if (!settings) throw new Error(`TELEPHONY=${engine} without its settings`);
  return settings;
}

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
    /** The simulator runs tools in-process through it (the tools service, bound once it exists). */
    runTool?: ToolRunner;
  },
): TelephonyAdapter {
  switch (config.telephony) {
    case 'simulated':
      return createSimulatedTelephony({
        db: deps.db,
        clock: deps.clock,
        callSeconds: config.simulatedCallSeconds,
        realtime: config.simulatedRealtime,
        publicBaseUrl: config.publicBaseUrl,
        runTool: deps.runTool,
      });
    case 'vapi':
      return createVapiTelephony({
        config: configured(config.vapi, 'vapi'),
        publicBaseUrl: config.publicBaseUrl,
        clock: deps.clock,
        findAgentVersion: deps.findAgentVersion,
      });
    case 'retell':
      return createRetellTelephony({
        config: configured(config.retell, 'retell'),
        db: deps.db,
        clock: deps.clock,
        publicBaseUrl: config.publicBaseUrl,
        findAgentVersion: deps.findAgentVersion,
      });
  }
}

export type { TelephonyAdapter } from './port.js';
