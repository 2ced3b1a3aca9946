/**
 * The benchmark agent's tool endpoint: a server in the bench process that answers every tool call
 * with a small JSON result, as a partner's endpoint would. It counts what it received, so the run
 * can say that the tools were really called (the simulated carrier calls each tool once per
 * answered call, docs/engines.md).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ToolReceiver {
  url: string;
  /** Tool calls received, and how many carried the Standard Webhooks signature headers. */
  received: () => { calls: number; signed: number };
  close(): Promise<void>;
}

export async function startToolReceiver(): Promise<ToolReceiver> {
  let calls = 0;
  let signed = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      calls += 1;
      if (request.headers['webhook-signature'] && request.headers['webhook-id']) signed += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"result":{"booked":true}}');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tools/book`,
    received: () => ({ calls, signed }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The benchmark agent's configuration: every field set, so the scenarios that trigger calls
 * measure an agent as an agency configures one (the bench runs on the simulated engine, whose
 * default lists allow this voice and model).
 */
export function everyFieldConfig(toolUrl: string) {
  return {
    voice: { provider: 'openai', voice_id: 'alloy' },
    model: { provider: 'openai', name: 'gpt-4o', temperature: 0.4 },
    language: 'en-US',
    max_duration_seconds: 600,
    silence_timeout_seconds: 30,
    end_call_phrases: ['goodbye', 'talk to you later'],
    voicemail: { action: 'leave_message', message: 'Hello {name}, we will call you back.' },
    transfer: [{ phone_number: '+14155550111', description: 'The caller asks for a human.' }],
    tools: [
      {
        name: 'book_appointment',
        description: 'Books an appointment.',
        parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
        url: toolUrl,
        timeout_seconds: 5,
      },
    ],
    analysis: {
      summary: true,
      success_criteria: 'An appointment was booked.',
      data: [
        { name: 'booked', type: 'boolean', description: 'Whether it was booked.' },
        { name: 'mood', type: 'enum', description: 'The mood.', values: ['happy', 'neutral', 'upset'] },
      ],
    },
  };
}
