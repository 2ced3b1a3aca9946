/**
 * One POST to a partner's tool endpoint: to the addresses the SSRF guard checked only, no
 * redirects, one deadline for the whole exchange (the tool's timeout), and at most
 * MAX_TOOL_ANSWER_BYTES of answer read.
 *
 * Connections are kept alive and reused (a busy agent calls the same endpoint on every call). A
 * reused connection only ever leads to an address checked when it was opened; a new one is opened
 * to the addresses checked for this request (`lookup`). A reused connection the endpoint closed
 * meanwhile fails before anything was answered: that request is sent once more on a new one.
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

/** An idle connection is closed after this long (below the usual servers' 5 s keep-alive). */
const IDLE_CONNECTION_MS = 4_000;
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxFreeSockets: 32, timeout: IDLE_CONNECTION_MS }),
  'https:': new https.Agent({ keepAlive: true, maxFreeSockets: 32, timeout: IDLE_CONNECTION_MS }),
};

export function postTool(request: ToolPost): Promise<ToolPostOutcome> {
  const deadline = Date.now() + request.timeoutMs;
  return new Promise((resolve) => {
    let settled = false;
    let req: http.ClientRequest;
    const timer = setTimeout(() => finish({ kind: 'timed_out' }), request.timeoutMs);
    function finish(outcome: ToolPostOutcome, keepConnection = false) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keepConnection) req.destroy();
      resolve(outcome);
    }
    function send(reuse: boolean) {
      const secure = request.url.protocol === 'https:';
      const client = secure ? https : http;
      req = client.request(
        request.url,
        {
          method: 'POST',
          headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
          agent: reuse ? agents[secure ? 'https:' : 'http:'] : false,
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
            finish({ kind: 'answered', status, body: Buffer.concat(chunks).toString('utf8') }, true),
          );
          response.on('error', (error) => finish({ kind: 'unreachable', message: error.message }));
        },
      );
      const sent = req;
      sent.on('error', (error: NodeJS.ErrnoException) => {
        const stale = sent.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        if (stale && !settled && Date.now() < deadline) send(false);
        else finish({ kind: 'unreachable', message: error.message });
      });
      sent.end(request.body);
    }
    send(true);
  });
}
