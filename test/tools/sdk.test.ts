/** The SDK's verifyToolRequest: a tool request signed as we sign it, with one secret or during a rotation. */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { VoiceplaneSignatureError, verifyToolRequest } from '../../packages/sdk/src/index.js';

const OLD = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const NEW = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
const body = JSON.stringify({
  call_id: 'call_1',
  agent_id: 'agt_1',
  tool: 'check_order',
  arguments: { order_id: 'A-17' },
});

function signed(secrets: string[], at = new Date()) {
  const signature = secrets.map((secret) => new Webhook(secret).sign('tc_1', at, body)).join(' ');
  return {
    'webhook-id': 'tc_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

describe('verifyToolRequest', () => {
  it('answers the request when a signature matches, with either secret during a rotation', () => {
    const headers = signed([NEW, OLD]);
    for (const secret of [OLD, NEW]) {
      expect(verifyToolRequest({ payload: body, headers, secret })).toEqual(JSON.parse(body));
    }
    expect(verifyToolRequest({ payload: body, headers: signed([NEW]), secret: [NEW, OLD] }).tool).toBe(
      'check_order',
    );
  });

  it('refuses another secret, an altered body, an old timestamp', () => {
    const headers = signed([NEW]);
    expect(() => verifyToolRequest({ payload: body, headers, secret: OLD })).toThrow(
      VoiceplaneSignatureError,
    );
    expect(() => verifyToolRequest({ payload: `${body} `, headers, secret: NEW })).toThrow(
      VoiceplaneSignatureError,
    );
    const stale = signed([NEW], new Date(Date.now() - 3_600_000));
    expect(() => verifyToolRequest({ payload: body, headers: stale, secret: NEW })).toThrow(
      VoiceplaneSignatureError,
    );
  });
});
