/** Requests outside the load generator: probes and the benchmark agent's setup. */
import { ADMIN_TOKEN } from './environment.js';
import type { RequestShape } from './load.js';
import type { ScenarioContext } from './scenario-types.js';
import type { BenchFixture } from './seed.js';
import { everyFieldConfig } from './tool-receiver.js';

export function describeError(error: unknown): string {
  const e = error as Error & { cause?: { message?: string; code?: string } };
  return e.cause
    ? `${e.message}: ${e.cause.code ?? ''} ${e.cause.message ?? ''}`.trim()
    : String(e?.message ?? error);
}

/** One request outside the load generator; retried once on a network error (a closing keep-alive socket). */
export async function send(
  baseUrl: string,
  request: RequestShape,
): Promise<{ status: number; body: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(`${baseUrl}${request.path}`, {
        method: request.method,
        headers: { ...request.headers, connection: 'close' },
        body: request.body,
        signal: AbortSignal.timeout(30_000),
      });
      return { status: response.status, body: await response.text() };
    } catch (error) {
      if (attempt >= 2)
        throw new Error(
          `${request.method} ${request.path.replace(/webh_\w+/, 'webh_…')} failed: ${describeError(error)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/**
 * Creates and publishes the benchmark agent through the operator API, with every configuration
 * field set and its tool pointing at `toolUrl`, and gives the tenant a tools secret (tool calls
 * are signed with it).
 */
export async function setupAgent(
  baseUrl: string,
  fixture: BenchFixture,
  toolUrl: string,
): Promise<Pick<ScenarioContext, 'webhookPath' | 'webhookUnavailable' | 'agentId'>> {
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const headers = { ...auth, 'content-type': 'application/json' };
  const created = await send(baseUrl, {
    method: 'POST',
    path: `/admin/v1/tenants/${fixture.tenantId}/agents`,
    headers,
    body: JSON.stringify({
      user_id: fixture.ownerUserId,
      name: 'Bench agent',
      phone_number: '+14155550199',
      prompt: 'You are calling {name} from {company} about their appointment.',
      welcome_message: 'Hello {name}, this is the bench agent.',
      config: everyFieldConfig(toolUrl),
    }),
  });
  if (created.status === 404) {
    return {
      webhookUnavailable:
        'not available yet: POST /admin/v1/tenants/{id}/agents answered 404 (agents not built yet)',
    };
  }
  if (created.status !== 201) {
    return { webhookUnavailable: `agent creation answered ${created.status}: ${created.body.slice(0, 200)}` };
  }
  const agent = JSON.parse(created.body).data as { id: string; webhook_id?: string; webhook_url?: string };
  const published = await send(baseUrl, {
    method: 'POST',
    path: `/admin/v1/agents/${agent.id}/publish`,
    headers: auth,
  });
  if (published.status !== 200) {
    return {
      webhookUnavailable: `agent publish answered ${published.status}: ${published.body.slice(0, 200)}`,
    };
  }
  const secret = await send(baseUrl, {
    method: 'POST',
    path: '/api/v1/tools-secret/rotate',
    headers: { authorization: `Bearer ${fixture.apiKey}` },
  });
  if (secret.status !== 200) {
    return {
      webhookUnavailable: `tools secret rotation answered ${secret.status}: ${secret.body.slice(0, 200)}`,
    };
  }
  const webhookPath = agent.webhook_url
    ? new URL(agent.webhook_url).pathname
    : `/webhooks/agents/${agent.webhook_id}/trigger`;
  return { webhookPath, agentId: agent.id };
}
