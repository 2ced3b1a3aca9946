/**
 * Agents' tools (docs/tools.md): the tenant's tools secret, and the check of a request your tool
 * endpoint receives. It is signed as event deliveries are (Standard Webhooks), with the tools
 * secret instead of an endpoint's:
 *
 *   const request = verifyToolRequest({ payload: rawBody, headers: req.headers, secret: process.env.TOOLS_SECRET });
 *   // answer 2xx with JSON (at most 16 KB): the agent speaks from it
 */
import { VoiceplaneSignatureError } from './errors.js';
import { type Data, Resource } from './resources.js';
import { type VerifyEventOptions, verifySigned } from './signatures.js';
import type { RequestOptions } from './transport.js';

/** What a tool's url receives. */
export interface ToolRequest {
  call_id: string;
  agent_id: string;
  /** The tool's name, as configured on the agent. */
  tool: string;
  /** What the model passed, shaped by the tool's `parameters`. */
  arguments: Record<string, unknown>;
}

/** The same options as verifyEvent: the raw body, the headers, the tools secret (or both during a rotation). */
export type VerifyToolRequestOptions = VerifyEventOptions;

/** The tool request, once its signature and timestamp check out; otherwise VoiceplaneSignatureError. */
export function verifyToolRequest(options: VerifyToolRequestOptions): ToolRequest {
  const body = verifySigned(options);
  const request = body as Partial<ToolRequest> | null;
  if (
    typeof request !== 'object' ||
    request === null ||
    typeof request.call_id !== 'string' ||
    typeof request.tool !== 'string' ||
    typeof request.arguments !== 'object'
  ) {
    throw new VoiceplaneSignatureError('The signed body is not a tool request.');
  }
  return request as ToolRequest;
}

export class Tools extends Resource {
  /** rotateToolsSecret — creates or replaces the tools secret; the old one keeps signing for 24 h. */
  rotateSecret(options?: RequestOptions): Promise<Data<'rotateToolsSecret'>> {
    return this.data({ method: 'POST', path: '/api/v1/tools-secret/rotate', options });
  }
}
