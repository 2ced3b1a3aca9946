/**
 * Where the voice engines call an agent's tools during a call: one route per engine
 * (src/tools/engine-routes.ts answers them). The engine mapping points Vapi's function tools and
 * Retell's custom functions at `toolRouteUrl(publicBaseUrl, engine)`; the simulator runs tools
 * in-process (ToolRunner) and has no route.
 */
export type ToolEngine = 'vapi' | 'retell';

export const TOOL_ROUTE_PATHS: Record<ToolEngine, string> = {
  vapi: '/engines/vapi/tool-calls',
  retell: '/engines/retell/tool-calls',
};

/** The absolute URL of an engine's tool route under PUBLIC_BASE_URL. */
export function toolRouteUrl(publicBaseUrl: string, engine: ToolEngine): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${TOOL_ROUTE_PATHS[engine]}`;
}

/**
 * What the simulator is handed to run a tool during a simulated call: the tools service's own
 * path, in-process (ToolService.simulatedRunner, given by the composition root).
 */
export type ToolRunner = (request: {
  tenantId: string;
  callId: string;
  name: string;
  arguments: unknown;
}) => Promise<{ ok: true; result: unknown } | { ok: false; error: string }>;
