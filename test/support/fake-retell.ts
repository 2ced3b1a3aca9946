/**
 * A local server speaking Retell's API for exactly the calls the Retell adapter makes
 * (src/telephony/retell/client.ts), so the adapter's real HTTP code runs in the suite:
 *
 * - POST /create-retell-llm, PATCH /update-retell-llm/{llm_id}, POST /create-agent,
 *   PATCH /update-agent/{agent_id}, POST /publish-agent/{agent_id}, GET /get-agent/{agent_id} (the
 *   latest version, or `?version=`), POST /v2/create-phone-call,
 *   GET /v2/get-call/{id}, GET /get-phone-number/{phone_number},
 *   PATCH /update-phone-number/{phone_number},
 *   POST /v2/list-calls (its documented filter_criteria: call_id, agent_id, call_status,
 *   from_number, to_number, and `metadata` keyed in dot notation, values matched as strings;
 *   sort_order by start_timestamp, calls not started yet in creation order; limit, default 50,
 *   at most 1000; pagination_key, the exclusive call id to continue after);
 * - versions as Retell documents them: an agent's latest version is its draft; publish-agent
 *   publishes it (and the LLM version it answers with) and starts a new draft with the next
 *   number; update-agent changes the draft; update-retell-llm changes the LLM's latest version,
 *   or starts the next one when that version is published. A published version never changes,
 *   and create-phone-call finds the agent version it names (`override_agent_version`);
 * - `Authorization: Bearer <apiKey>` required (401 `{ status: 'error', message }` otherwise);
 * - every request body validated against Retell's published OpenAPI schema of its operation
 *   (./engines/retell-openapi.json, with its origin), plus one check Retell's schemas leave out:
 *   no top-level field the operation does not define (a misspelt field would otherwise pass).
 *   A failing body is 400 like Retell's, and recorded with its `schemaErrors`;
 * - `fail(...)` makes the next matching requests answer an error (503, 400, …) without doing anything;
 * - `playCall(callId, script)` plays a placed call: posts `call_started` (when it connected),
 *   `call_ended` and `call_analyzed` to the webhook_url of the call's agent, signed like Retell
 *   (x-retell-signature with retell-sdk's `sign` and the API key), and moves the call's status so
 *   GET /v2/get-call agrees.
 *
 * `answerDelayMs` makes create-phone-call create the call at once and answer later (a client that
 * dies meanwhile never learns the id); `autoPlay` plays each created call by itself after a while,
 * delivering each webhook until the service takes it (2xx), as Retell retries its webhooks.
 *
 * `ringInbound(to, from)` rings one of the account's numbers (`phoneNumbers`): the `call_inbound`
 * webhook goes to the number's inbound_webhook_url, signed, and the call its answer names is created
 * as an inbound call for `playCall`.
 * The code is in ./fake-retell/ (openapi.ts, calls.ts, phone-numbers.ts, server.ts).
 *
 * Usage: `const retell = await startFakeRetell(); …config { apiKey: retell.apiKey, apiBase: retell.url }…;
 * await retell.playCall(retell.calls[0].call_id, { disconnectionReason: 'dial_no_answer' }); await retell.close();`
 */

export { RETELL_OPENAPI_PATH } from './fake-retell/openapi.js';
export type { RetellInboundRing } from './fake-retell/phone-numbers.js';
export { startFakeRetell } from './fake-retell/server.js';
export * from './fake-retell/types.js';
