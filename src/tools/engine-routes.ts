/**
 * The tool routes of the voice engine TELEPHONY names (docs/tools.md): Vapi's tool-calls
 * messages or Retell's custom functions, each authenticated as that engine's other callbacks.
 * The simulator runs tools in-process (ToolService.call) and has no route.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../core/config/config.js';
import { retellToolRoutes } from './retell-routes.js';
import type { ToolService } from './service.js';
import { vapiToolRoutes } from './vapi-routes.js';

export const toolEngineRoutes: FastifyPluginAsync<{
  tools: ToolService;
  config: Pick<Config, 'vapi' | 'retell'>;
}> = async (app, { tools, config }) => {
  if (config.vapi) await app.register(vapiToolRoutes, { tools, config: config.vapi });
  if (config.retell) await app.register(retellToolRoutes, { tools, config: config.retell });
};
