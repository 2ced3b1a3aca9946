/**
 * A local server speaking Vapi's documented API for the operations the vapi adapter uses, so the
 * adapter's real client runs in tests (point VAPI_API_BASE at `url`):
 * - `GET /phone-number` (the `limit` parameter checked as documented: 0..1000), and
 *   `PATCH /phone-number/{id}` (the server URL and fixed assistant, validated against the published
 *   UpdateTwilioPhoneNumberDTO),
 * - `POST /call`: the body is validated against CreateCallDTO from Vapi's published OpenAPI
 *   document (./engines/vapi-openapi.json, an excerpt; see its `x-vendored` note) and refused 400
 *   like Vapi (`{ message: [...], error: 'Bad Request', statusCode: 400 }`) when it fails, or when
 *   its phoneNumberId is not one of the fake's numbers; otherwise 201 with a Call (`status: queued`),
 * - `GET /call/{id}`: the Call as it stands (404 when unknown),
 * - `GET /call`: the list, newest first, with the query parameters of the published operation
 *   (CallController_findAll: `id`, `assistantId`, `phoneNumberId`, `limit` 0..1000 (default 100),
 *   `createdAt`/`updatedAt` with `Gt`, `Lt`, `Ge`, `Le`); a parameter the operation does not have,
 *   or a value outside its schema, is refused 400 like Vapi's validation.
 * Every request needs `Authorization: Bearer <apiKey>` (401 otherwise) and is recorded.
 *
 * `answerDelayMs` makes `POST /call` create the call at once and answer later (a client that dies
 * meanwhile never learns the id). `autoPlay` plays each created call by itself after a while,
 * posting each message until the service takes it (2xx), so a call survives the service being down.
 *
 * `fail` makes the next matching requests answer an error status, cut the connection, or hang.
 * `playCall` plays a created call the way Vapi reports it: status-updates (ringing, in-progress
 * when answered, ended) then the end-of-call-report, each POSTed to the call's
 * `assistant.server.url` with `Authorization: Bearer <serverSecret>`; the Call seen by
 * `GET /call/{id}` follows along.
 *
 * `ringInbound(to, from)` rings one of its numbers: the `assistant-request` server message goes
 * to the number's server URL, the answer is checked against the published
 * ServerMessageResponseAssistantRequest, and the inbound Call it creates plays like any other.
 * The code is in ./fake-vapi/ (openapi.ts, phone-numbers.ts, server.ts).
 *
 *   const vapi = await startFakeVapi({ phoneNumbers: ['+14155550100'], serverSecret });
 *   … dial through createVapiTelephony({ config: { apiBase: vapi.url, apiKey: vapi.apiKey, … } })
 *   await vapi.playCall(engineCallId, { endedReason: 'customer-ended-call', transcript: '…' });
 */

export { VAPI_OPENAPI_EXCERPT } from './fake-vapi/openapi.js';
export type { InboundRing } from './fake-vapi/phone-numbers.js';
export { startFakeVapi } from './fake-vapi/server.js';
export * from './fake-vapi/types.js';
