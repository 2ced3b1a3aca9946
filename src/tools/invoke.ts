/**
 * One POST to a partner's tool endpoint: to the addresses the SSRF guard checked only, no
 * redirects, one deadline for the whole exchange (the tool's timeout), and at most
 * MAX_TOOL_ANSWER_BYTES of answer read. One connection per call: tool calls are few and a
 * conversation waits on each, so nothing is pooled.
 */
import http from 'node:http';
import https from 'node:https';
import { lookupFor, type ResolvedAddress } from '../core/security/outbound-addresses.js';

/** The largest answer a tool may give: it goes back to the engine, into the model's context. */
export const MAX_TOOL_ANSWER_BYTES = 16 * 1024;

export type ToolPostOutcome =
  | { kind: 'answered'; status: number; body: string }
  | { kind: 'too_large'; status: number }
  | { kind: 'timed_out' }
  | { kind: 'unreachable'; message: string };

export interface ToolPost {
  url: URL;
  addresses: ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export function postTool(request: ToolPost): Promise<ToolPostOutcome> {
  const client = request.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: ToolPostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const req = client.request(
      request.url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        agent: false,
        lookup: lookupFor(request.addresses),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_TOOL_ANSWER_BYTES) finish({ kind: 'too_large', status });
          else chunks.push(chunk);
        });
        response.on('end', () =>
          finish({ kind: 'answered', status, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', (error) => finish({ kind: 'unreachable', message: error.message }));
      },
    );
    const timer = setTimeout(() => finish({ kind: 'timed_out' }), request.timeoutMs);
    req.on('error', (error) => finish({ kind: 'unreachable', message: error.message }));
    req.end(request.body);
  });
}
