/**
 * Idempotency-Key (docs/design-choices.md), reusable by any route that sets `config.idempotent`.
 *
 * A key is scoped to the tenant and bound to a fingerprint (method + path + canonical JSON body).
 * The first request inserts an `executing` row it owns under a short lease, renewed while it runs;
 * duplicates that arrive meanwhile wait (up to 10 s) and replay its answer. A process that dies
 * stops renewing, so a retry takes the key over within a lease (5 s), resuming at the recovery
 * point. Whoever records the answer must still own the key in that transaction, so an owner that
 * lost its lease (stalled, not dead) commits nothing and the key's side effect happens once.
 * Answers produced once the request started executing (2xx, 404, 409 conflict, 422
 * unprocessable_entity) are stored; others release the key so a corrected retry may proceed. Handlers with side effects record their answer inside the
 * transaction that makes the change (`recordInTx`), so "changed" and "answer stored" commit
 * together and a crash can never make a retry repeat the side effect.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { type Db, type Executor, runPrepared } from '../db/database.js';
import { isReportedOutage } from '../db/health.js';
import { ApiError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import { fingerprintOf, isStorableAnswer } from './fingerprint.js';
import { createLeaseRenewer } from './leases.js';

export { canonicalJson, fingerprintOf, isStorableAnswer } from './fingerprint.js';

export interface IdempotencyKeysTable {
  tenant_id: string;
  key: string;
  fingerprint: string;
  status: 'executing' | 'completed';
  owner: string;
  locked_until: Date;
  recovery_point: string | null;
  recovery_data: unknown;
  response_status: number | null;
  response_body: unknown;
  response_headers: unknown;
  created_at: Date;
}

declare module '../db/database.js' {
  interface Tables {
    idempotency_keys: IdempotencyKeysTable;
  }
}

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MAX_KEY_LENGTH = 255;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

export interface StoredResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export type BeginResult =
  | { kind: 'execute'; owner: string; recoveryPoint: string | null; recoveryData: unknown }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'reuse' }
  | { kind: 'busy' };

export interface IdempotencyStore {
  begin(tenantId: string, key: string, fingerprint: string): Promise<BeginResult>;
  /** Stores the answer in the caller's transaction; throws if this request no longer owns the key. */
  recordInTx(tx: Executor, claim: IdempotencyClaim, response: StoredResponse): Promise<void>;
  record(claim: IdempotencyClaim, response: StoredResponse): Promise<void>;
  /** Saves how far a multi-phase request got, so a retry resumes there. */
  saveRecoveryPoint(tx: Executor, claim: IdempotencyClaim, point: string, data: unknown): Promise<void>;
  release(claim: IdempotencyClaim): Promise<void>;
  /**
   * Frees the key in the background, trying again while its lease lasts (then it lapses anyway):
   * an answer never waits for the database that may be the very reason for it.
   */
  releaseLater(claim: IdempotencyClaim): void;
  /** The request is over (answered, recorded or not): stop renewing its lease. */
  finish(claim: IdempotencyClaim): void;
  /** Deletes records older than the window; returns how many. */
  purgeExpired(): Promise<number>;
}

export interface IdempotencyClaim {
  tenantId: string;
  key: string;
  owner: string;
  recoveryPoint: string | null;
  recoveryData: unknown;
  /** Set once the answer is stored, so the response hook does not store it again. */
  recorded: boolean;
}

export interface IdempotencyOptions {
  db: Db;
  clock: Clock;
  /** How long a duplicate waits for the first request's answer. */
  waitMs?: number;
  /**
   * How long an executing request owns its key without a renewal; a live owner renews it every
   * third of it, so another request takes over only a key whose process died (or stalled that long).
   */
  leaseMs?: number;
  pollMs?: number;
}

export function createIdempotencyStore(options: IdempotencyOptions): IdempotencyStore {
  const { db, clock } = options;
  const waitMs = options.waitMs ?? 10_000;
  const leaseMs = options.leaseMs ?? 5_000;
  const pollMs = options.pollMs ?? 25;

  const { track, untrack } = createLeaseRenewer({ db, clock, leaseMs });

  type OwnedKey = { owner: string; recovery_point: string | null; recovery_data: unknown };

  /** One attempt to own the key: insert, or take over an expired record or an abandoned lease. */
  async function tryOwn(tenantId: string, key: string, fingerprint: string) {
    const now = clock.now();
    const owner = randomBase62(16);
    const windowStart = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS);
    const lockedUntil = new Date(now.getTime() + leaseMs);
    const [owned] = await runPrepared<OwnedKey>(db, {
      name: 'idempotency_own_key',
      text: `
        INSERT INTO idempotency_keys (tenant_id, key, fingerprint, status, owner, locked_until, created_at)
        VALUES ($1, $2, $3, 'executing', $4, $5, $6)
        ON CONFLICT (tenant_id, key) DO UPDATE SET
          owner = EXCLUDED.owner,
          locked_until = EXCLUDED.locked_until,
          status = 'executing',
          fingerprint = EXCLUDED.fingerprint,
          created_at = CASE WHEN idempotency_keys.created_at < $7 THEN EXCLUDED.created_at ELSE idempotency_keys.created_at END,
          recovery_point = CASE WHEN idempotency_keys.created_at < $7 THEN NULL ELSE idempotency_keys.recovery_point END,
          recovery_data = CASE WHEN idempotency_keys.created_at < $7 THEN NULL ELSE idempotency_keys.recovery_data END,
          response_status = NULL, response_body = NULL, response_headers = NULL
        WHERE idempotency_keys.created_at < $7
           OR (idempotency_keys.status = 'executing' AND idempotency_keys.locked_until < $6
               AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
        RETURNING owner, recovery_point, recovery_data`,
      values: [tenantId, key, fingerprint, owner, lockedUntil, now, windowStart],
    });
    return owned;
  }

  async function current(tenantId: string, key: string) {
    return db
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'status', 'response_status', 'response_body', 'response_headers'])
      .where('tenant_id', '=', tenantId)
      .where('key', '=', key)
      .executeTakeFirst();
  }

  async function store(executor: Executor, claim: IdempotencyClaim, response: StoredResponse) {
    const updated = await runPrepared(executor, {
      name: 'idempotency_store_answer',
      text: `
        UPDATE idempotency_keys
        SET status = 'completed', response_status = $4, response_body = $5, response_headers = $6
        WHERE tenant_id = $1 AND key = $2 AND owner = $3 AND status = 'executing'
        RETURNING 1 AS stored`,
      values: [
        claim.tenantId,
        claim.key,
        claim.owner,
        response.status,
        JSON.stringify(response.body),
        JSON.stringify(response.headers),
      ],
    });
    if (updated.length !== 1) throw lostKey();
    claim.recorded = true;
  }

  async function release(claim: IdempotencyClaim) {
    untrack(claim);
    await db
      .deleteFrom('idempotency_keys')
      .where('tenant_id', '=', claim.tenantId)
      .where('key', '=', claim.key)
      .where('owner', '=', claim.owner)
      .where('status', '=', 'executing')
      .execute();
  }

  /** Another request took the key over: this one must not change anything more. */
  function lostKey() {
    return new ApiError(
      'conflict',
      'Another request with this Idempotency-Key took over; retry to get its answer.',
      undefined,
      { headers: { 'retry-after': '1' } },
    );
  }

  return {
    async begin(tenantId, key, fingerprint) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const owned = await tryOwn(tenantId, key, fingerprint);
        if (owned) {
          track({ tenantId, key, owner: owned.owner });
          return {
            kind: 'execute',
            owner: owned.owner,
            recoveryPoint: owned.recovery_point,
            recoveryData: owned.recovery_data,
          };
        }
        const row = await current(tenantId, key);
        if (row) {
          if (row.fingerprint !== fingerprint) return { kind: 'reuse' };
          if (row.status === 'completed') {
            return {
              kind: 'replay',
              response: {
                status: row.response_status ?? 200,
                body: row.response_body,
                headers: (row.response_headers ?? {}) as Record<string, string>,
              },
            };
          }
        }
        // Still executing elsewhere (or released just now): wait and look again.
        if (Date.now() >= deadline) return { kind: 'busy' };
        await sleep(pollMs);
      }
    },
    recordInTx: (tx, claim, response) => store(tx, claim, response),
    async record(claim, response) {
      await store(db, claim, response);
      untrack(claim);
    },
    async saveRecoveryPoint(tx, claim, point, data) {
      const updated = await tx
        .updateTable('idempotency_keys')
        .set({ recovery_point: point, recovery_data: JSON.stringify(data ?? null) })
        .where('tenant_id', '=', claim.tenantId)
        .where('key', '=', claim.key)
        .where('owner', '=', claim.owner)
        .where('status', '=', 'executing')
        .executeTakeFirst();
      // Fenced like the answer: a request that lost its key must not start the next phase.
      if (Number(updated.numUpdatedRows) !== 1) throw lostKey();
      claim.recoveryPoint = point;
      claim.recoveryData = data;
    },
    release,
    releaseLater(claim) {
      const until = Date.now() + leaseMs;
      const attempt = (): Promise<void> =>
        release(claim).catch(() =>
          Date.now() + pollMs * 10 < until ? sleep(pollMs * 10).then(attempt) : undefined,
        );
      void attempt();
    },
    finish: untrack,
    async purgeExpired() {
      const cutoff = new Date(clock.now().getTime() - IDEMPOTENCY_WINDOW_MS);
      const result = await db
        .deleteFrom('idempotency_keys')
        .where('created_at', '<', cutoff)
        .where((eb) => eb.or([eb('status', '=', 'completed'), eb('locked_until', '<', clock.now())]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours Idempotency-Key (docs/design-choices.md). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotencyKey?: string;
    idempotency?: IdempotencyClaim;
  }
}

type RouteHook = (...args: any[]) => any;
const hookList = (hooks: RouteHook | RouteHook[] | undefined): RouteHook[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/**
 * Gives every `config.idempotent` route the Idempotency-Key behaviour. The hooks are attached to
 * those routes only (through onRoute, so call this before the routes are added): other routes
 * pay nothing for them.
 */
export function registerIdempotency(
  app: FastifyInstance,
  store: IdempotencyStore,
  tenantOf: (request: FastifyRequest) => string,
): void {
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.preValidation = [
      ...hookList(route.preValidation as RouteHook | RouteHook[]),
      readKey,
    ] as typeof route.preValidation;
    route.preHandler = [
      ...hookList(route.preHandler as RouteHook | RouteHook[]),
      beginOrReplay,
    ] as typeof route.preHandler;
    route.onSend = [...hookList(route.onSend as RouteHook | RouteHook[]), storeAnswer] as typeof route.onSend;
  });

  async function readKey(request: FastifyRequest) {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header.join(',') : header;
    if (key.length === 0 || key.length > MAX_KEY_LENGTH || !PRINTABLE_ASCII.test(key)) {
      throw new ApiError(
        'invalid_request',
        `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters.`,
      );
    }
    request.idempotencyKey = key;
  }

  async function beginOrReplay(request: FastifyRequest, reply: FastifyReply) {
    const key = request.idempotencyKey;
    if (!key) return;
    const tenantId = tenantOf(request);
    const path = request.url.split('?')[0];
    const result = await store.begin(tenantId, key, fingerprintOf(request.method, path, request.body));
    switch (result.kind) {
      case 'execute':
        request.idempotency = {
          tenantId,
          key,
          owner: result.owner,
          recoveryPoint: result.recoveryPoint,
          recoveryData: result.recoveryData,
          recorded: false,
        };
        return;
      case 'reuse':
        throw new ApiError(
          'idempotency_key_reuse',
          'This Idempotency-Key was already used with a different request body or path.',
        );
      case 'busy':
        throw new ApiError(
          'conflict',
          'A request with this Idempotency-Key is still being processed; retry shortly.',
          undefined,
          { headers: { 'retry-after': '1' } },
        );
      case 'replay': {
        const { status, body, headers } = result.response;
        const replayed =
          body && typeof body === 'object' && 'request_id' in (body as object)
            ? { ...(body as object), request_id: request.id }
            : body;
        reply.headers(headers).header('idempotent-replayed', 'true').code(status);
        return reply.send(replayed);
      }
    }
  }

  async function storeAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const claim = request.idempotency;
    if (!claim) return payload;
    // The handler is done (every transaction of it has ended): nothing left to keep the key for.
    store.finish(claim);
    if (claim.recorded) return payload;
    let body: any;
    try {
      body = typeof payload === 'string' ? JSON.parse(payload) : undefined;
    } catch {
      body = undefined;
    }
    if (!isStorableAnswer(reply.statusCode, body?.error?.code)) {
      // A refusal (a 503 above all) goes out at once; a retry meanwhile waits as a duplicate does.
      store.releaseLater(claim);
      return payload;
    }
    try {
      const location = reply.getHeader('location');
      await store.record(claim, {
        status: reply.statusCode,
        body,
        headers: location ? { location: String(location) } : {},
      });
    } catch (error) {
      // The answer still goes out; the lease, no longer renewed, lets a retry take over soon.
      if (!isReportedOutage(error)) request.log.warn({ err: error }, 'could not store the idempotent answer');
    }
    return payload;
  }
}
