/**
 * What the tenant page's forms change, each through the same service as the operator API:
 * a refused form comes back with its issues beside the fields, a change redirects with a message.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UpdateBrandingBody } from '../../../branding/schemas.js';
import type { BrandingService } from '../../../branding/service.js';
import { ApiError } from '../../../core/errors.js';
import type { IdempotencyStore } from '../../../core/idempotency/store.js';
import { SuspendTenantBody, UpdateTenantBody } from '../../../tenants/schemas.js';
import type { TenantService } from '../../../tenants/service.js';
import { operatorIdempotencyScope } from '../../../wallets/admin-routes.js';
import { PutWalletBody, type WalletCredit, WalletCreditBody } from '../../../wallets/schemas.js';
import type { WalletService } from '../../../wallets/service.js';
import {
  type FormFields,
  fieldIssues,
  formOf,
  integerField,
  textField,
  validated,
} from '../../../web/forms.js';
import { oncePerFormKey } from '../../../web/once.js';
import type { TenantSuspension } from '../../suspension.js';
import { redirectWithFlash } from '../cookies.js';
import type { FormState } from './tenant-forms.js';

type TenantPage = (
  request: FastifyRequest,
  reply: FastifyReply,
  tenantId: string,
  form?: FormState,
) => Promise<FastifyReply>;
type Params = { Params: { id: string; domainId?: string } };

const decimal = (fields: FormFields, name: string): number | string | null => {
  const text = textField(fields, name);
  if (text === undefined) return null;
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
};

const creditAnswer = (credit: WalletCredit) => ({ status: 200, body: { data: credit }, headers: {} });

export async function tenantActions(
  app: FastifyInstance,
  services: {
    tenants: TenantService;
    wallets: WalletService;
    branding: BrandingService;
    suspension: TenantSuspension;
    idempotency: IdempotencyStore;
  },
  tenantPage: TenantPage,
) {
  const { tenants, wallets, branding, suspension, idempotency } = services;

  /** Runs a form's change; a refusal (4xx) shows the page again with the form's issues. */
  function form(
    name: string,
    change: (tenantId: string, fields: FormFields, request: FastifyRequest<Params>) => Promise<string>,
  ) {
    return async (request: FastifyRequest<Params>, reply: FastifyReply) => {
      const tenantId = request.params.id;
      const fields = formOf(request);
      try {
        const message = await change(tenantId, fields, request);
        return redirectWithFlash(reply, `/operator/tenants/${tenantId}`, message);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500 || error.code === 'not_found') throw error;
        const values = Object.fromEntries(Object.keys(fields).map((key) => [key, textField(fields, key)]));
        return tenantPage(request, reply, tenantId, {
          form: name,
          values,
          errors: fieldIssues(error),
          status: error.status,
          flash: { kind: 'error', message: error.message },
        });
      }
    };
  }

  app.post<Params>(
    '/tenants/:id/suspend',
    form('status', async (tenantId, fields) => {
      const body = validated(SuspendTenantBody, { reason: textField(fields, 'reason') });
      await suspension.suspend(tenantId, body.reason);
      return 'The tenant is suspended: its keys, webhooks, console and portal are refused.';
    }),
  );
  app.post<Params>(
    '/tenants/:id/lift',
    form('status', async (tenantId) => {
      await suspension.lift(tenantId);
      return 'The suspension is lifted: everything works again.';
    }),
  );

  app.post<Params>(
    '/tenants/:id/wallet',
    form('wallet', async (tenantId, fields) => {
      const current = await wallets.get(tenantId);
      const body = validated(PutWalletBody, {
        wholesale_rate: decimal(fields, 'wholesale_rate') ?? undefined,
        currency: textField(fields, 'currency'),
        auto_refill: current.auto_refill,
      });
      await wallets.put(tenantId, body);
      return 'The wallet’s rate is saved.';
    }),
  );

  app.post<Params>(
    '/tenants/:id/wallet/credit',
    form('credit', async (tenantId, fields) => {
      const body = validated(WalletCreditBody, {
        minutes: integerField(fields, 'minutes'),
        reason: textField(fields, 'reason'),
      });
      // The form's key is an Idempotency-Key (as the API's): a resent form credits once.
      const credited = await oncePerFormKey(
        idempotency,
        {
          tenantId: operatorIdempotencyScope(tenantId),
          formKey: textField(fields, 'form_key'),
          path: `/operator/tenants/${tenantId}/wallet/credit`,
          fields: body,
        },
        (claim) => wallets.credit(tenantId, body, claim && { claim, answer: creditAnswer }),
        (stored) => (stored as { data: WalletCredit }).data,
      );
      return `Credited ${body.minutes} minutes: the balance is ${credited.balance_minutes}.`;
    }),
  );

  app.post<Params>(
    '/tenants/:id/processor',
    form('processor', async (tenantId, fields) => {
      const body = validated(UpdateTenantBody, {
        processor_account_id: textField(fields, 'processor_account_id') ?? null,
        application_fee_percent: decimal(fields, 'application_fee_percent'),
      });
      await tenants.update(tenantId, body);
      return 'The processor account is saved.';
    }),
  );

  app.post<Params>(
    '/tenants/:id/branding',
    form('branding', async (tenantId, fields) => {
      const body = validated(UpdateBrandingBody, {
        brand_name: textField(fields, 'brand_name') ?? null,
        slug: textField(fields, 'slug') ?? null,
        logo_url: textField(fields, 'logo_url') ?? null,
        primary_color: textField(fields, 'primary_color') ?? null,
        support_email: textField(fields, 'support_email') ?? null,
      });
      await tenants.get(tenantId);
      await branding.update(tenantId, body);
      return 'The branding is saved.';
    }),
  );

  app.post<Params>(
    '/tenants/:id/domains',
    form('domains', async (tenantId, fields) => {
      await tenants.get(tenantId);
      const { domain } = await branding.addDomain(tenantId, {
        hostname: textField(fields, 'hostname') ?? '',
      });
      return `Added ${domain.hostname}: publish its TXT record, then verify it.`;
    }),
  );

  app.post<Params>(
    '/tenants/:id/domains/:domainId/verify',
    form('domains', async (tenantId, _fields, request) => {
      const domain = await branding.verifyDomain(tenantId, request.params.domainId ?? '');
      return domain.status === 'verified'
        ? `${domain.hostname} is verified.`
        : `${domain.hostname}: the TXT record is not there yet.`;
    }),
  );

  app.post<Params>(
    '/tenants/:id/domains/:domainId/remove',
    form('domains', async (tenantId, _fields, request) => {
      const domain = await branding.removeDomain(tenantId, request.params.domainId ?? '');
      return `${domain.hostname} is removed.`;
    }),
  );
}
