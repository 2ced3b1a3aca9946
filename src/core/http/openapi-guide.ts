/**
 * The prose of the documents: the partner document's getting-started guide (rendered as the first
 * sections of /docs) and the operator document's introduction. Markdown, CommonMark only.
 */
import { ERROR_CODES_BY_STATUS } from './openapi-document.js';

export interface GuideOptions {
  productName: string;
  keyPrefix: string;
  publicBaseUrl: string;
  /** Every scope a key may carry. */
  scopes: readonly string[];
}

function errorTable(): string {
  const rows = Object.entries(ERROR_CODES_BY_STATUS).map(
    ([status, codes]) => `| ${status} | ${codes.map((c) => `\`${c}\``).join(', ')} |`,
  );
  return ['| status | `error.code` |', '|---|---|', ...rows].join('\n');
}

export function partnerGuide({ productName, keyPrefix, publicBaseUrl, scopes }: GuideOptions): string {
  return `The ${productName} partner API provisions your clients (users), sells them your plans, manages their subscriptions, and lets your voice agents place outbound calls from any CRM or form.

## Getting started

Every request is JSON over HTTPS to \`${publicBaseUrl}\`. List your plan catalog with your API key:

\`\`\`sh
curl ${publicBaseUrl}/api/v1/plans -H "Authorization: Bearer ${keyPrefix}_test_…"
\`\`\`

## Authentication

Send your API key as a bearer token: \`Authorization: Bearer ${keyPrefix}_<live|test>_<32 characters>\`. Keys are issued from your dashboard and carry **scopes** (${scopes.map((scope) => `\`${scope}\``).join(', ')}); each operation below names the scope it requires. A missing, malformed, revoked or unknown key answers 401, a key without the scope 403 with \`details.required_scopes\`. The call-trigger webhook needs no key: its URL is the credential.

Your users never hold your key. A dashboard you build for them signs each user in with \`POST /auth/v1/sessions\` (tenant id, email, password) and then sends the session token it answers as \`Authorization: Bearer vps_…\` to the *User sessions* operations; a session lasts 7 days, a password reset signs the user out everywhere.

## Errors

Every error is one envelope, whatever the endpoint:

\`\`\`json
{ "error": { "code": "validation_failed", "message": "The request has invalid fields.", "details": [{ "field": "email", "issue": "must be a valid email address." }] }, "request_id": "req_8fJ2kLmN0pQrStUv" }
\`\`\`

Branch on \`error.code\` (a closed set, listed per response below), never on \`message\`. \`request_id\` equals the \`X-Request-Id\` header of every answer; quote it to support. A 5xx never changes anything you can see; retry it.

${errorTable()}

## Idempotency

\`POST /users\`, \`POST /subscriptions\` and \`PATCH /subscriptions/{id}/plan\` accept an \`Idempotency-Key\` header (1 to 255 printable ASCII characters). A retry with the same key and body within 24 hours answers the original result with \`Idempotent-Replayed: true\` and does nothing again; the same key with another body is 409 \`idempotency_key_reuse\`; a retry while the first is still running is 409 \`conflict\` with \`Retry-After\`. Subscriptions forward the key to the card processor, so a retry bills once.

## Pagination

Lists take \`page\` (from 1) and \`limit\` (1 to 100, default 20) and answer \`{ "data": [...], "pagination": { "page", "limit", "total", "pages", "has_more" } }\`. A page past the end is \`data: []\` with the true \`total\`. Rows created between two fetches may shift items by one position.

## Rate limits

Each API key has a token bucket (by default 100 requests per second with bursts of 200; your plan may differ). Every answer carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`; beyond the limit the answer is 429 \`rate_limited\` with \`Retry-After\` in seconds. Each webhook URL has its own bucket (10 per second, bursts of 20).

## The call-trigger webhook

Each agent has a URL \`${publicBaseUrl}/webhooks/agents/{agentWebhookId}/trigger\`. A \`POST\` with \`{ "phone": "+14155550123", "name": "Ada Lovelace" }\` (any other key becomes the call's context and fills \`{key}\` placeholders in the agent's prompt) queues one call and answers 202. Paste the URL into your CRM or form tool; treat it as a secret, and rotate it from the dashboard if it leaks.
`;
}

export function operatorGuide({ productName }: GuideOptions): string {
  return `The ${productName} operator API runs the platform: tenants (partner agencies), their API keys, plans, agents, users' credits and payment methods, and the calls placed. Authenticate with \`Authorization: Bearer <ADMIN_TOKEN>\`, the token the server was started with. Errors use the same envelope and codes as the partner API.`;
}
