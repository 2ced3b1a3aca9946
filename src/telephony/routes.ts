/**
 * The callback route of the voice engine TELEPHONY names (docs/engines.md): Vapi's server messages
 * or Retell's webhooks, each authenticated the engine's way and applied through EngineReports.
 * Nothing is registered for the simulator.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config/config.js';
import type { EngineReports } from './port.js';
import { retellRoutes } from './retell/routes.js';
import { vapiRoutes } from './vapi/routes.js';

export const engineCallbackRoutes: FastifyPluginAsync<{
  config: Pick<Config, 'vapi' | 'retell'>;
  reports: EngineReports;
  clock: Clock;
}> = async (app, { config, reports, clock }) => {
  if (config.vapi) await app.register(vapiRoutes, { reports, config: config.vapi, clock });
  if (config.retell) await app.register(retellRoutes, { reports, config: config.retell, clock });
};
