/**
 * Set-up shared by the crash tests that run the real server as a process: the operator's
 * requests, a user with credits and published agents ready to take webhook triggers, and every
 * call as the operator lists it.
 */
import type { ServerProcess } from '../support/server-process.js';

/** A request that must succeed; its `data`. */
export async function ok(server: ServerProcess, method: string, url: string, body: unknown, token: string) {
  const response = await server.request(method, url, { token, body });
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${response.raw}`);
  return response.body.data;
}

/** A user of the tenant with 10,000 minutes and `agents` published agents; their webhook ids. */
export async function publishedAgents(
  server: ServerProcess,
  options: { adminToken: string; tenantId: string; apiKey: string; agents: number },
): Promise<string[]> {
  const { adminToken, tenantId } = options;
  const user = await ok(
    server,
    'POST',
    '/api/v1/users',
    { email: 'owner@example.com', name: 'Owner', password: 'correct horse' },
    options.apiKey,
  );
  await ok(server, 'POST', `/admin/v1/users/${user.id}/credits`, { minutes: 10_000 }, adminToken);
  const webhooks: string[] = [];
  for (let i = 0; i < options.agents; i++) {
    const agent = await ok(
      server,
      'POST',
      `/admin/v1/tenants/${tenantId}/agents`,
      {
        user_id: user.id,
        name: `Agent ${i}`,
        phone_number: '+14155550199',
        prompt: 'Call {name}.',
        welcome_message: 'Hi {name}.',
      },
      adminToken,
    );
    await ok(server, 'POST', `/admin/v1/agents/${agent.id}/publish`, undefined, adminToken);
    webhooks.push(agent.webhook_id);
  }
  return webhooks;
}

/** Every call of every tenant, by id, through the operator's paged list. */
export async function allCalls(server: ServerProcess, adminToken: string): Promise<Map<string, any>> {
  const calls = new Map<string, any>();
  for (let page = 1; ; page++) {
    const response = await server.request('GET', `/admin/v1/calls?limit=100&page=${page}`, {
      token: adminToken,
    });
    for (const call of response.body.data) calls.set(call.id, call);
    if (!response.body.pagination.has_more) return calls;
  }
}
