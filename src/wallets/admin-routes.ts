/** Operator routes for a tenant's wholesale wallet (docs/wallets.md). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, IdParam, ListEnvelope } from '../core/http/schemas.js';
import { answerRecorder, sendAnswer } from '../core/idempotency/answer.js';
import {
  type IdempotencyStore,
  registerIdempotency,
  type StoredResponse,
} from '../core/idempotency/store.js';
import {
  PutWalletBody,
  Wallet,
  WalletCredit,
  WalletCreditBody,
  WalletLedgerEntry,
  WalletLedgerQuery,
  WalletPaymentMethodBody,
  WalletUsage,
  WalletUsageQuery,
} from './schemas.js';
import type { WalletService } from './service.js';

/** The operator's Idempotency-Keys for a tenant, apart from the tenant's own partner keys. */
export const operatorIdempotencyScope = (tenantId: string) => `operator:${tenantId}`;

const creditAnswer = (credit: WalletCredit): StoredResponse => ({
  status: 201,
  body: { data: credit },
  headers: {},
});

export async function walletAdminRoutes(
  fastify: FastifyInstance,
  { wallets, idempotency }: { wallets: WalletService; idempotency: IdempotencyStore },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  registerIdempotency(app, idempotency, (request) =>
    operatorIdempotencyScope((request.params as { id: string }).id),
  );

  app.get(
    '/tenants/:id/wallet',
    { schema: { params: IdParam, response: { 200: DataEnvelope(Wallet) } } },
    async (request) => ({ data: await wallets.get(request.params.id) }),
  );

  app.put(
    '/tenants/:id/wallet',
    {
      schema: {
        params: IdParam,
        body: PutWalletBody,
        response: { 200: DataEnvelope(Wallet), 201: DataEnvelope(Wallet) },
      },
    },
    async (request, reply) => {
      const { wallet, created } = await wallets.put(request.params.id, request.body);
      return reply.code(created ? 201 : 200).send({ data: wallet });
    },
  );

  app.post(
    '/tenants/:id/wallet/credits',
    {
      config: { idempotent: true },
      schema: { params: IdParam, body: WalletCreditBody, response: { 201: DataEnvelope(WalletCredit) } },
    },
    async (request, reply) => {
      const credit = await wallets.credit(
        request.params.id,
        request.body,
        answerRecorder(request.idempotency, creditAnswer),
      );
      return sendAnswer(reply, creditAnswer(credit));
    },
  );

  app.post(
    '/tenants/:id/wallet/payment-method',
    { schema: { params: IdParam, body: WalletPaymentMethodBody, response: { 200: DataEnvelope(Wallet) } } },
    async (request) => ({ data: await wallets.setRefillCard(request.params.id, request.body.token) }),
  );

  app.get(
    '/tenants/:id/wallet/ledger',
    {
      schema: {
        params: IdParam,
        querystring: WalletLedgerQuery,
        response: { 200: ListEnvelope(WalletLedgerEntry) },
      },
    },
    async (request) => wallets.ledger(request.params.id, request.query),
  );

  app.get(
    '/tenants/:id/wallet/usage',
    {
      schema: {
        params: IdParam,
        querystring: WalletUsageQuery,
        response: { 200: DataEnvelope(WalletUsage) },
      },
    },
    async (request) => ({ data: await wallets.usage(request.params.id, request.query) }),
  );
}
