/** Partner route: GET /api/v1/usage. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import { DataEnvelope, errorResponses, PARTNER_ERRORS } from '../core/http/schemas.js';
import { Usage, UsageQuery } from './schemas.js';
import type { UsageService } from './service.js';

export async function usageRoutes(fastify: FastifyInstance, { usage }: { usage: UsageService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/usage',
    {
      config: { scope: 'subscriptions:read' },
      schema: {
        operationId: 'getUsage',
        summary: 'Get a user’s usage for a month',
        description:
          'What the user’s calendar month (UTC) added up to: minutes by kind, read from the credit ledger (included by ' +
          'the plan, used by calls, topped up, overage settled, other adjustments, and the balance at the month’s end), ' +
          'the calls that ended in the month by outcome, and the amounts due in the minor unit of the plan’s currency ' +
          '(succeeded top-ups and overage; subscription fees are billed on their own and not included). ' +
          'Overage: a call may take the balance below zero; when the subscription’s period turns, the negative minutes ' +
          'are settled as that period’s overage at the plan’s overage_rate (processor plans: billed at once on an invoice ' +
          'of its own, charged to the card on file, listed in unsettled_overage when declined or refused; agency plans: ' +
          'recorded here for the agency’s own invoicing) and the balance restarts at zero.',
        tags: ['Usage'],
        querystring: UsageQuery,
        response: {
          200: DataEnvelope(Usage, 'The user’s usage for the month.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await usage.userUsage(tenantOf(request), request.query) }),
  );
}
