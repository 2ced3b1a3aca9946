/** The demo tenant's published agent, and the lines that show a newcomer how to call with it. */
import type { AgentService } from '../agents/service.js';

export async function seedDemoAgent(
  agents: AgentService,
  base: string,
  seed: { tenantId: string; userId: string; apiKey: string },
): Promise<{ agent: { id: string; webhookUrl: string }; lines: string[] }> {
  const created = await agents.create(seed.tenantId, {
    user_id: seed.userId,
    name: 'Demo receptionist',
    phone_number: '+14155550199',
    prompt: 'You are the friendly assistant of Demo Agency. Call {name} about {topic} and book a follow-up.',
    welcome_message: 'Hi {name}, this is the Demo Agency assistant calling about {topic}.',
  });
  const agent = await agents.publish(seed.tenantId, created.id);
  const body = JSON.stringify({ phone: '+14155550123', name: 'Ada Lovelace', topic: 'your demo' });
  const lines = [
    `Demo agent ${agent.id} (published, the demo user has 60 credit minutes). Its webhook URL is a secret:`,
    `  ${agent.webhook_url}`,
    'Place a simulated call (numbers ending in 0000 do not answer, 9999 fail):',
    `  curl -s -X POST ${agent.webhook_url} -H 'Content-Type: application/json' -d '${body}'`,
    `Follow it (status, outcome, timeline): curl -s '${base}/api/v1/calls?limit=1' -H 'Authorization: Bearer ${seed.apiKey}'`,
  ];
  return { agent: { id: agent.id, webhookUrl: agent.webhook_url }, lines };
}
