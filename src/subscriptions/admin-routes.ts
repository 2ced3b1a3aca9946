/** Operator routes for a user's card on file (docs/design-choices.md), through the processor port. */

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ProcessorAccounts } from '../billing/accounts.js';
import {
  type PaymentProcessor,
  ProcessorRequestError,
  ProcessorUnavailableError,
} from '../billing/processor.js';
import { findCustomer, insertCustomer, setCard } from '../billing/repository.js';
import { auditNothingChanged } from '../core/audit/context.js';
import { type AuditChange, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { ApiError, unprocessable } from '../core/errors.js';
import { DataEnvelope, IdParam } from '../core/http/schemas.js';
import { randomBase62 } from '../core/ids.js';
import { findUser } from '../users/repository.js';
import { tenantOfUser } from '../users/service.js';
import { PaymentMethod, PaymentMethodBody } from './schemas.js';

async function viaProcessor<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProcessorUnavailableError) {
      throw new ApiError(
        'service_unavailable',
        'The payment processor did not answer; retry later.',
        undefined,
        {
          headers: { 'retry-after': '1' },
        },
      );
    }
    if (error instanceof ProcessorRequestError)
      throw unprocessable(`The payment processor refused the card: ${error.message}`);
    throw error;
  }
}

export async function paymentMethodAdminRoutes(
  fastify: FastifyInstance,
  deps: { db: Db; clock: Clock; processor: PaymentProcessor; accounts: ProcessorAccounts },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.put(
    '/users/:id/payment-method',
    { schema: { params: IdParam, body: PaymentMethodBody, response: { 200: DataEnvelope(PaymentMethod) } } },
    async (request) => {
      const userId = request.params.id;
      const tenantId = await tenantOfUser(deps.db, userId);
      const { processor } = await deps.accounts.bind(deps.processor, tenantId);
      let customer = await findCustomer(deps.db, tenantId, userId, processor.name);
      if (!customer) {
        const user = (await findUser(deps.db, tenantId, userId))!;
        // One customer per user even when two requests race: the key makes the processor create it once.
        const created = await viaProcessor(() =>
          processor.createCustomer(
            { email: user.email, name: user.name, metadata: { tenant_id: tenantId, user_id: userId } },
            `vp_cus_${userId}`,
          ),
        );
        const now = deps.clock.now();
        customer = await insertCustomer(deps.db, {
          tenant_id: tenantId,
          user_id: userId,
          processor: processor.name,
          customer_id: created.id,
          payment_method_id: null,
          card_brand: null,
          card_last4: null,
          created_at: now,
          updated_at: now,
        });
      }
      const card = await viaProcessor(() =>
        processor.attachPaymentMethod(
          { customerId: customer.customer_id, token: request.body.token },
          `vp_pm_${randomBase62(24)}`,
        ),
      );
      const now = deps.clock.now();
      await writeAudited(
        deps.db,
        (executor) => setCard(executor, tenantId, userId, processor.name, card, now),
        () => cardChange('payment_method.set', tenantId, userId, now),
      );
      if (customer.payment_method_id && customer.payment_method_id !== card.id) {
        // The replaced card is only detached; a failure here leaves a harmless extra card at the processor.
        await processor
          .detachPaymentMethod(customer.payment_method_id, `vp_detach_${customer.payment_method_id}`)
          .catch(() => {});
      }
      return { data: { user_id: userId, brand: card.brand, last4: card.last4 } };
    },
  );

  app.delete(
    '/users/:id/payment-method',
    { schema: { params: IdParam, response: { 200: DataEnvelope(PaymentMethod) } } },
    async (request) => {
      const userId = request.params.id;
      const tenantId = await tenantOfUser(deps.db, userId);
      const { processor } = await deps.accounts.bind(deps.processor, tenantId);
      const customer = await findCustomer(deps.db, tenantId, userId, processor.name);
      if (customer?.payment_method_id) {
        const pmId = customer.payment_method_id;
        await viaProcessor(async () => {
          try {
            await processor.detachPaymentMethod(pmId, `vp_detach_${pmId}`);
          } catch (error) {
            // Already detached at the processor: the card is gone either way.
            if (!(error instanceof ProcessorRequestError)) throw error;
          }
        });
        const now = deps.clock.now();
        await writeAudited(
          deps.db,
          (executor) => setCard(executor, tenantId, userId, processor.name, null, now),
          () => cardChange('payment_method.removed', tenantId, userId, now),
        );
      } else {
        auditNothingChanged();
      }
      return { data: { user_id: userId, brand: null, last4: null } };
    },
  );
}

/** A card's audit entry: the user it belongs to, never a token or a card number. */
function cardChange(action: string, tenantId: string, userId: string, at: Date): AuditChange {
  return { action, tenantId, objectType: 'user', objectId: userId, fields: ['payment_method'], at };
}
