/**
 * Each tenant's default voice and model for its agents: an agent that sets no voice (or model)
 * takes the tenant's default, else the operator's (AGENT_DEFAULT_VOICE, AGENT_DEFAULT_MODEL). A
 * tenant's defaults must be ones the configured voice engine allows.
 */
import { writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { AgentCatalog } from '../core/config/agents.js';
import type { Executor } from '../core/db/database.js';
import { type FieldIssue, validationFailed } from '../core/errors.js';
import { type ConfigDefaults, defaultAgentConfig, operatorDefaults } from './config.js';
import { engineIssues } from './config-rules.js';
import { findAgentDefaults, saveAgentDefaults } from './repository.js';
import type { AgentDefaults, AgentDefaultsBody, AgentEngineOptions } from './schemas.js';

export function createAgentDefaults(deps: { db: Executor; clock: Clock; catalog: AgentCatalog }) {
  const { db, clock, catalog } = deps;
  const operator = operatorDefaults(catalog);

  const options: AgentEngineOptions = {
    engine: catalog.engine,
    voice_providers: [...catalog.voiceProviders],
    models: catalog.models.map((model) => ({ provider: model.provider, name: model.name })),
    max_temperature: catalog.maxTemperature,
    min_max_duration_seconds: catalog.minMaxDurationSeconds,
    languages: catalog.languages ? [...catalog.languages] : null,
  };

  async function read(tenantId: string, executor: Executor = db): Promise<AgentDefaults> {
    const row = await findAgentDefaults(executor, tenantId);
    const voice = row?.voice ?? null;
    const model = row?.model ?? null;
    return {
      voice,
      model,
      effective: { voice: voice ?? { ...operator.voice }, model: model ?? { ...operator.model } },
      allowed: options,
    };
  }

  return {
    /** The operator's voice and model (what a tenant without defaults of its own gets). */
    operator,

    /** What the configured voice engine allows: the pickers of a configuration form. */
    options: () => options,

    /** The voice and model an agent of the tenant gets when it sets none. */
    async resolve(tenantId: string, executor: Executor = db): Promise<ConfigDefaults> {
      return (await read(tenantId, executor)).effective;
    },

    /** The tenant's defaults (null: the operator's), what they come to, and what is allowed. */
    get: (tenantId: string) => read(tenantId),

    /**
     * Replaces the tenant's defaults (null: back to the operator's); a voice or model the engine
     * does not allow is refused with 422 naming the field.
     */
    async set(tenantId: string, body: AgentDefaultsBody): Promise<AgentDefaults> {
      const candidate = defaultAgentConfig({
        voice: body.voice ?? operator.voice,
        model: body.model ?? operator.model,
      });
      const issues: FieldIssue[] = engineIssues(candidate, catalog)
        .filter(
          (issue) =>
            (body.voice && issue.field?.startsWith('config.voice.')) ||
            (body.model && issue.field?.startsWith('config.model.')),
        )
        .map((issue) => ({ ...issue, field: issue.field?.replace(/^config\./, '') }));
      if (issues.length > 0) throw validationFailed(issues);
      const now = clock.now();
      await writeAudited(
        db,
        (executor) => saveAgentDefaults(executor, tenantId, { voice: body.voice, model: body.model }, now),
        () => ({
          action: 'agent_defaults.updated',
          tenantId,
          objectType: 'agent_defaults',
          objectId: tenantId,
          fields: Object.keys(body),
          at: now,
        }),
      );
      return read(tenantId);
    },
  };
}

export type AgentDefaultsService = ReturnType<typeof createAgentDefaults>;
