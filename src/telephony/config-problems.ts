/**
 * What the configured voice engine cannot run in an agent's configuration (each adapter's own
 * list: ./vapi/assistant.ts, ./retell/agent-body.ts); the simulator runs whatever the
 * configuration's bounds allow. Publish refuses a draft with any of them.
 */
import type { AgentConfig, ConfigProblem } from './agent-config.js';
import { retellConfigProblems } from './retell/agent-body.js';
import { vapiConfigProblems } from './vapi/assistant.js';

export function engineConfigProblems(engine: string, config: AgentConfig): ConfigProblem[] {
  if (engine === 'vapi') return vapiConfigProblems(config);
  if (engine === 'retell') return retellConfigProblems(config);
  return [];
}
