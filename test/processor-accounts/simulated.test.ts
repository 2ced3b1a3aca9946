/**
 * Connected accounts with the simulated adapter: its objects (kept in the database) carry the
 * account they were made in and a processor bound to another account does not find them; the
 * services bind every call of an agency to its account and ask for its application fee.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentProcessor } from '../../src/billing/processor.js';
import { ProcessorRequestError } from '../../src/billing/processor.js';
import { type BillingApp, startBillingApp } from '../subscriptions/helpers.js';
import { type Agency, agencyWithClient } from './helpers.js';

/** What each bound processor was asked, by account (null: the platform's). */
const asked: { account: string | null; operation: string; input: any }[] = [];

/** Records the calls of the processor and of every processor it binds. */
function recording(inner: PaymentProcessor, account: string | null = null): PaymentProcessor {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop === 'forAccount') {
        return (id: string | null) => recording(target.forAccount(id), id);
      }
      return (...args: unknown[]) => {
        asked.push({ account, operation: String(prop), input: args[0] });
        return value.apply(target, args);
      };
    },
  });
}

let app: BillingApp;
let east: Agency;
let west: Agency;
let home: Agency;

beforeAll(async () => {
  app = await startBillingApp('simulated', { wrap: (inner) => recording(inner) });
  east = await agencyWithClient(app.t, { name: 'East', account: 'acct_East01', fee: 12.5 });
  west = await agencyWithClient(app.t, { name: 'West', account: 'acct_West02', fee: null });
  home = await agencyWithClient(app.t, { name: 'Home', account: null, fee: 3 });
});
afterAll(() => app?.close());

/** The account each stored simulator object of the ids was made in (null: the platform's). */
async function accountsOf(ids: string[]): Promise<Record<string, string | null>> {
  const rows = await app.t.services.database.db
    .selectFrom('simulated_processor_objects')
    .select(['id', 'doc'])
    .where('id', 'in', ids)
    .execute();
  return Object.fromEntries(rows.map((row) => [row.id, (row.doc as { _account?: string })._account ?? null]));
}

describe('the simulated adapter keeps each account’s objects apart', () => {
  it('stores every object of an agency in its account', async () => {
    for (const agency of [east, west, home]) {
      const ids = Object.values(agency.ids);
      const accounts = await accountsOf(ids);
      expect(Object.keys(accounts).sort()).toEqual([...ids].sort());
      for (const id of ids) expect(accounts[id], id).toBe(agency.account);
    }
  });

  it('binds every processor call of an agency to its account', () => {
    const byTenant = new Map([east, west, home].map((agency) => [agency.tenant.id, agency.account]));
    const customers = new Map(
      [east, west, home].map((agency) => [agency.ids.customer, agency.account] as const),
    );
    const calls = asked.filter(
      (call) => byTenant.has(call.input?.metadata?.tenant_id) || customers.has(call.input?.customerId),
    );
    // createCustomer, attachPaymentMethod, createPrice, createSubscription, chargeCustomer each.
    expect(calls.length).toBe(15);
    for (const call of calls) {
      const tenantId = call.input?.metadata?.tenant_id;
      const expected = byTenant.has(tenantId)
        ? byTenant.get(tenantId)
        : customers.get(call.input?.customerId);
      expect(call.account, call.operation).toBe(expected);
    }
  });

  it('does not find another account’s subscription (resource_missing)', async () => {
    const processor = app.t.services.processor;
    expect((await processor.forAccount('acct_East01').retrieveSubscription(east.ids.subscription)).id).toBe(
      east.ids.subscription,
    );
    for (const account of ['acct_West02', null]) {
      const error = await processor
        .forAccount(account)
        .retrieveSubscription(east.ids.subscription)
        .catch((e) => e);
      expect(error).toBeInstanceOf(ProcessorRequestError);
      expect(error.code).toBe('resource_missing');
    }
  });
});

describe('application fees', () => {
  const input = (agency: Agency, operation: string) =>
    asked.find((call) => call.operation === operation && call.input?.customerId === agency.ids.customer)
      ?.input;

  it('asks for the connected agency’s fee on its subscription and charge', () => {
    expect(input(east, 'createSubscription').applicationFeePercent).toBe(12.5);
    // 12.5 % of 1000 cents.
    expect(input(east, 'chargeCustomer').applicationFeeAmount).toBe(125);
  });

  it('asks for none without a fee or without a connected account', () => {
    for (const agency of [west, home]) {
      expect(input(agency, 'createSubscription').applicationFeePercent ?? null).toBeNull();
      expect(input(agency, 'chargeCustomer').applicationFeeAmount ?? null).toBeNull();
    }
  });

  it('is refused by the platform’s own account', async () => {
    const error = await app.t.services.processor
      .chargeCustomer(
        {
          customerId: home.ids.customer,
          paymentMethodId: home.ids.paymentMethod,
          amount: 500,
          currency: 'usd',
          description: 'fee on the platform',
          metadata: {},
          applicationFeeAmount: 5,
        },
        'vp_test_fee_on_platform',
      )
      .catch((e) => e);
    expect(error).toBeInstanceOf(ProcessorRequestError);
    expect(error.message).toContain('application_fee_amount');
  });
});
