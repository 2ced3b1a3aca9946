/**
 * A local server speaking Stripe's wire protocol for exactly the calls the `stripe` adapter makes,
 * so the adapter's real code (the official SDK) runs in the test suite: bearer secret key,
 * form-encoded bodies in Stripe's bracket notation, Stripe JSON objects and error shapes,
 * Idempotency-Key replay (`Idempotent-Replayed: true`, 400 idempotency_error on other
 * parameters). The objects and their billing semantics come from the same engine as the simulated
 * adapter (src/billing/simulator/, and src/billing/simulator/charges.ts for PaymentIntents: a
 * declined confirmation answers 402 card_error with `decline_code` and the `payment_intent`; and
 * src/billing/simulator/invoice-items.ts for invoice items; src/billing/simulator/invoices.ts for
 * one-off invoices, whose declined payment answers 402 card_error and leaves the invoice open),
 * driven by the test's clock.
 *
 * Faults can be injected per route: an immediate 500, or a connection cut without an answer
 * (before or after the change was made), to prove the service's behaviour when Stripe is down or
 * its answer is lost. The client sees a cut connection as it sees a timeout (a connection error,
 * outcome unknown), without the test depending on how long anything takes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { accountStore } from '../../src/billing/simulator/accounts.js';
import { createPaymentIntents } from '../../src/billing/simulator/charges.js';
import { ProcessorEngine } from '../../src/billing/simulator/engine.js';
import { createInvoiceItems } from '../../src/billing/simulator/invoice-items.js';
import {
  type EngineStore,
  memoryStore,
  publicObject,
  type StoredObject,
} from '../../src/billing/simulator/objects.js';
import { EngineError } from '../../src/billing/simulator/params.js';

export interface Fault {
  method: string;
  path: RegExp;
  /**
   * error: 500 api_error, nothing done; drop-before: no change, no answer; drop-after: change made,
   * no answer; hang-before: no change, the connection held open `holdMs` (a process killed meanwhile).
   */
  mode: 'error' | 'drop-before' | 'drop-after' | 'hang-before';
  /** How long hang-before holds the request before dropping it (default 2 s). */
  holdMs?: number;
  /**
   * How many matching requests it affects (default 1). The SDK sends a request again once when
   * its connection is cut, even without network retries: a lost answer takes 2.
   */
  times?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  /** The `Stripe-Account` header: the connected account the request acts in (none: the platform's). */
  account: string | undefined;
  /** The request's parameters (query or form body), parsed. */
  params: Record<string, any>;
  /** Answered from the idempotency store, without running again. */
  replayed: boolean;
  /** Answered (or left unanswered) by an injected fault. */
  faulted: boolean;
  /** The request's work ran (not replayed, not stopped by a fault before it). */
  ran: boolean;
  status: number;
}

export interface StripeTestServer {
  url: string;
  secretKey: string;
  /** The engine; its calls act in the platform's account unless run inside `inAccount`. */
  engine: ProcessorEngine;
  /** Runs `work` (calls of `engine`) in the connected account `account` (null: the platform's). */
  inAccount<T>(account: string | null, work: () => Promise<T>): Promise<T>;
  /** The objects made in the account (null: the platform's): customers, cards, prices, subscriptions, intents… */
  objects(account: string | null): { id: string; object: string }[];
  requests: RecordedRequest[];
  /** Requests that ran (not replayed, not faulted before running) matching method and path. */
  executed(method: string, path: RegExp): number;
  fault(fault: Fault): void;
  clearFaults(): void;
  close(): Promise<void>;
}

/** Stripe's form encoding: `items[0][price]=x&metadata[k]=v` → `{ items: [{ price: 'x' }], metadata: { k: 'v' } }`. */
export function parseStripeForm(text: string): Record<string, any> {
  const root: Record<string, any> = {};
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const segments = rawKey.replace(/\]/g, '').split('[');
    let node = root;
    segments.forEach((segment, index) => {
      const name = segment === '' ? String(Object.keys(node).length) : segment;
      if (index === segments.length - 1) node[name] = value;
      else node = node[name] ??= {};
    });
  }
  const arrays = (value: any): any => {
    if (!value || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    const converted = Object.fromEntries(keys.map((k) => [k, arrays(value[k])]));
    if (keys.length > 0 && keys.every((k, i) => k === String(i))) return keys.map((k) => converted[k]);
    return converted;
  };
  return arrays(root);
}

/** The simulator's own bookkeeping documents, not Stripe objects. */
const INTERNAL_OBJECTS = new Set([
  'idempotency_record',
  'customer_payment_intents',
  'customer_invoice_items',
  'customer_invoices',
]);

type Handler = (match: RegExpExecArray, params: Record<string, any>) => Promise<unknown>;

export async function startStripeServer(options: {
  now: () => Date;
  secretKey?: string;
}): Promise<StripeTestServer> {
  const secretKey = options.secretKey ?? `sk_test_${crypto.randomBytes(12).toString('hex')}`;
  // Stripe Connect: each request acts in the account of its Stripe-Account header (none: the
  // platform's), and sees only that account's objects; idempotency keys are per account too.
  const requestAccount = new AsyncLocalStorage<string | null>();
  const shared = memoryStore();
  const made = new Map<string, { account: string | null; object: string }>();
  const tracked: EngineStore = {
    get: (id) => shared.get(id),
    async put(doc, tenantId) {
      made.set(doc.id, {
        account: (doc as StoredObject & { _account?: string })._account ?? null,
        object: doc.object,
      });
      await shared.put(doc, tenantId);
    },
    subscriptionsOf: (customerId) => shared.subscriptionsOf(customerId),
  };
  const store = accountStore(tracked, () => requestAccount.getStore() ?? null);
  const engine = new ProcessorEngine({ store, now: options.now });
  const paymentIntents = createPaymentIntents(store, options.now);
  const invoiceItems = createInvoiceItems(store, options.now);
  const requests: RecordedRequest[] = [];
  let faults: (Fault & { left: number })[] = [];
  const idempotency = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  const inFlight = new Map<string, Promise<void>>();
  const sockets = new Set<import('node:net').Socket>();

  const routes: [string, RegExp, Handler][] = [
    ['POST', /^\/v1\/customers$/, (_m, p) => engine.createCustomer(p)],
    ['POST', /^\/v1\/customers\/([^/]+)$/, (m, p) => engine.updateCustomer(m[1], p)],
    ['POST', /^\/v1\/payment_methods\/([^/]+)\/attach$/, (m, p) => engine.attachPaymentMethod(m[1], p)],
    ['POST', /^\/v1\/payment_methods\/([^/]+)\/detach$/, (m) => engine.detachPaymentMethod(m[1])],
    ['POST', /^\/v1\/prices$/, (_m, p) => engine.createPrice(p)],
    ['POST', /^\/v1\/subscriptions$/, (_m, p) => engine.createSubscription(p)],
    ['GET', /^\/v1\/subscriptions$/, (_m, p) => engine.listSubscriptions(p)],
    ['GET', /^\/v1\/subscriptions\/([^/]+)$/, (m) => engine.retrieveSubscription(m[1])],
    ['POST', /^\/v1\/subscriptions\/([^/]+)$/, (m, p) => engine.updateSubscription(m[1], p)],
    ['DELETE', /^\/v1\/subscriptions\/([^/]+)$/, (m) => engine.cancelSubscription(m[1])],
    ['POST', /^\/v1\/payment_intents$/, (_m, p) => paymentIntents.create(p)],
    ['GET', /^\/v1\/payment_intents$/, (_m, p) => paymentIntents.list(p)],
    ['GET', /^\/v1\/payment_intents\/([^/]+)$/, (m) => paymentIntents.retrieve(m[1])],
    ['POST', /^\/v1\/invoiceitems$/, (_m, p) => invoiceItems.create(p)],
    ['GET', /^\/v1\/invoiceitems$/, (_m, p) => invoiceItems.list(p)],
    ['GET', /^\/v1\/invoiceitems\/([^/]+)$/, (m) => invoiceItems.retrieve(m[1])],
    ['POST', /^\/v1\/invoices$/, (_m, p) => engine.invoices.create(p)],
    ['GET', /^\/v1\/invoices$/, (_m, p) => engine.invoices.list(p)],
    ['GET', /^\/v1\/invoices\/([^/]+)$/, (m) => engine.invoices.retrieve(m[1])],
    ['POST', /^\/v1\/invoices\/([^/]+)\/finalize$/, (m, p) => engine.invoices.finalize(m[1], p)],
    ['POST', /^\/v1\/invoices\/([^/]+)\/pay$/, (m, p) => engine.invoices.pay(m[1], p)],
  ];

  function send(
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    if (res.destroyed) return;
    res.writeHead(status, {
      'content-type': 'application/json',
      'request-id': `req_${crypto.randomBytes(7).toString('hex')}`,
      ...headers,
    });
    res.end(JSON.stringify(body));
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, rawBody: string) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const key =
      typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    const account =
      typeof req.headers['stripe-account'] === 'string' ? req.headers['stripe-account'] : undefined;
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      idempotencyKey: key,
      account,
      params: {},
      replayed: false,
      faulted: false,
      ran: false,
      status: 0,
    };
    requests.push(record);
    const answer = (status: number, body: unknown, headers?: Record<string, string>) => {
      record.status = status;
      send(res, status, body, headers);
    };

    const auth = req.headers.authorization;
    if (auth !== `Bearer ${secretKey}`) {
      return answer(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } });
    }
    const route = routes.find(([m, pattern]) => m === method && pattern.test(url.pathname));
    if (!route) {
      return answer(404, {
        error: {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${method}: ${url.pathname}).`,
        },
      });
    }
    const params = parseStripeForm(method === 'GET' ? url.search.slice(1) : rawBody);
    record.params = params;
    // Stripe takes application fees only on a connected account's objects.
    const fee = ['application_fee_percent', 'application_fee_amount'].find((name) => name in params);
    if (fee && !account) {
      return answer(400, {
        error: {
          type: 'invalid_request_error',
          param: fee,
          message: `Can only apply an ${fee} when the request is made on behalf of another account (using an OAuth key or the Stripe-Account header).`,
        },
      });
    }
    const fault = faults.find((f) => f.left > 0 && f.method === method && f.path.test(url.pathname));
    if (fault) fault.left--;
    if (fault?.mode === 'error') {
      record.faulted = true;
      return answer(
        500,
        { error: { type: 'api_error', message: 'An unknown error occurred (injected).' } },
        { 'stripe-should-retry': 'false' },
      );
    }
    if (fault?.mode === 'drop-before') {
      record.faulted = true;
      res.destroy();
      return;
    }
    if (fault?.mode === 'hang-before') {
      record.faulted = true;
      await new Promise((resolve) => setTimeout(resolve, fault.holdMs ?? 2000));
      res.destroy();
      return;
    }

    const run = async (): Promise<{ status: number; body: unknown }> => {
      record.ran = true;
      try {
        const work = () => route[2](route[1].exec(url.pathname)!, params);
        return { status: 200, body: publicObject(await requestAccount.run(account ?? null, work)) };
      } catch (error) {
        if (error instanceof EngineError) return { status: error.status, body: error.toStripe() };
        return { status: 500, body: { error: { type: 'api_error', message: String(error) } } };
      }
    };

    let result: { status: number; body: unknown };
    if (key && method !== 'GET') {
      const scopedKey = `${account ?? ''}\n${key}`;
      const fingerprint = crypto
        .createHash('sha256')
        .update(`${method} ${url.pathname}\n${JSON.stringify(params)}`)
        .digest('hex');
      while (inFlight.has(scopedKey)) await inFlight.get(scopedKey);
      const stored = idempotency.get(scopedKey);
      if (stored) {
        if (stored.fingerprint !== fingerprint) {
          return answer(400, {
            error: {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
            },
          });
        }
        record.replayed = true;
        if (fault?.mode === 'drop-after') {
          record.faulted = true;
          res.destroy();
          return;
        }
        return answer(stored.status, stored.body, { 'idempotent-replayed': 'true', 'idempotency-key': key });
      }
      let done!: () => void;
      inFlight.set(scopedKey, new Promise<void>((resolve) => (done = resolve)));
      try {
        result = await run();
        idempotency.set(scopedKey, { fingerprint, ...result });
      } finally {
        inFlight.delete(scopedKey);
        done();
      }
    } else {
      result = await run();
    }
    if (fault?.mode === 'drop-after') {
      record.faulted = true;
      res.destroy();
      return;
    }
    answer(result.status, result.body, key ? { 'idempotency-key': key } : {});
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((error) => {
        send(res, 500, { error: { type: 'api_error', message: String(error) } });
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    secretKey,
    engine,
    inAccount: (account, work) => requestAccount.run(account, work),
    objects: (account) =>
      [...made]
        .filter(([, doc]) => doc.account === account && !INTERNAL_OBJECTS.has(doc.object))
        .map(([id, doc]) => ({ id, object: doc.object })),
    requests,
    executed: (method, path) =>
      requests.filter((r) => r.ran && r.method === method && path.test(r.path)).length,
    fault(fault) {
      faults.push({ ...fault, left: fault.times ?? 1 });
    },
    clearFaults() {
      faults = [];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
