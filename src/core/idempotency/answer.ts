/**
 * How a route's HTTP answer is stored with the change it reports, when the service — not the route —
 * owns the transaction.
 *
 * The route knows the answer (status, envelope, `Location`); the service knows the transaction that
 * makes the change. The route hands the service an `AnswerRecorder`: the request's Idempotency-Key
 * claim and the function that turns the service's domain result into the HTTP answer. The service
 * calls `recordAnswer` inside the transaction that makes the change (or finds it made), so the
 * stored answer commits with the change or not at all: a retry either replays it or runs again,
 * never repeats a side effect. The route sends the same function's answer, so what is sent and what
 * is replayed cannot drift apart.
 */
import type { FastifyReply } from 'fastify';
import type { Executor } from '../db/database.js';
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from './store.js';

export interface AnswerRecorder<Result> {
  /** The request's Idempotency-Key claim (a multi-phase service also keys its own retries by it). */
  readonly claim: IdempotencyClaim;
  /** The HTTP answer for a result: what the route sends and what a retry with the key replays. */
  answer(result: Result): StoredResponse;
}

/** The recorder of a request with an Idempotency-Key; undefined without one (nothing to store). */
export function answerRecorder<Result>(
  claim: IdempotencyClaim | undefined,
  answer: (result: Result) => StoredResponse,
): AnswerRecorder<Result> | undefined {
  return claim ? { claim, answer } : undefined;
}

/** Stores the answer for `result` in the caller's transaction `tx`. */
export async function recordAnswer<Result>(
  store: IdempotencyStore,
  tx: Executor,
  recorder: AnswerRecorder<Result> | undefined,
  result: Result,
): Promise<void> {
  if (!recorder) return;
  await store.recordInTx(tx, recorder.claim, recorder.answer(result));
}

/** Sends an answer built for a recorder. */
export function sendAnswer(reply: FastifyReply, answer: StoredResponse) {
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

/**
 * The answer of a write that made (or queued) a resource: `{ data }` with its `Location` under
 * `/api/v1/<collection>/<id>`.
 */
export function locatedAnswer<Resource extends { id: string }>(
  status: 201 | 202,
  publicBaseUrl: string,
  collection: string,
): (resource: Resource) => StoredResponse {
  return (resource) => ({
    status,
    body: { data: resource },
    headers: { location: `${publicBaseUrl}/api/v1/${collection}/${encodeURIComponent(resource.id)}` },
  });
}
