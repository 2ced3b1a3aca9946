/**
 * The callback route of the voice engine TELEPHONY names (docs/engines.md): Vapi's server messages
 * or Retell's webhooks, each authenticated the engine's way and applied through EngineReports.
 * The simulator has no callbacks: it serves its calls' recordings (simulated-recordings.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config/config.js';
import type { Db } from '../core/db/database.js';
import type { EngineReports, InboundCalls, TelephonyAdapter } from './port.js';
import { retellRoutes } from './retell/routes.js';
import { simulatedRecordingRoutes } from './simulated-recordings.js';
import { vapiRoutes } from './vapi/routes.js';

export const engineCallbackRoutes: FastifyPluginAsync<{
  config: Pick<Config, 'vapi' | 'retell' | 'telephony'> & Partial<Pick<Config, 'publicBaseUrl'>>;
  reports: EngineReports;
  /** Who answers the imported numbers' inbound calls (src/phone-numbers/inbound.ts). */
  inbound?: InboundCalls;
  /** The configured engine (Retell names the agent version an inbound call is answered with). */
  telephony?: Pick<TelephonyAdapter, 'inboundAgentOf'>;
  clock: Clock;
  /** The simulator's recordings are read from its records of the dials. */
  db: Db;
}> = async (app, { config, reports, clock, db, inbound, telephony }) => {
  if (config.telephony === 'simulated') await app.register(simulatedRecordingRoutes, { db });
  if (config.vapi) {
    await app.register(vapiRoutes, {
      reports,
      config: config.vapi,
      clock,
      inbound,
      publicBaseUrl: config.publicBaseUrl,
    });
  }
  if (config.retell) {
    const agentOf = telephony?.inboundAgentOf?.bind(telephony);
    await app.register(retellRoutes, { reports, config: config.retell, clock, inbound, agentOf });
  }
};
