/**
 * POST /v1/invoiceitems on the Stripe-protocol test server, over the wire as Stripe receives it
 * (form encoding): the parameters Stripe accepts, its refusals (missing customer or currency, an
 * unknown parameter, both amount and unit_amount_decimal, another customer's subscription), a
 * credit (negative amount), Idempotency-Key replay, and the list the adapter's lookup reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StripeTestServer, startStripeServer } from '../support/stripe-server.js';

describe('POST /v1/invoiceitems', () => {
  let stripe: StripeTestServer;
  let customer: string;
  let other: string;

  const post = async (path: string, form: Record<string, string>, key?: string) => {
    const response = await fetch(`${stripe.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stripe.secretKey}`,
        'content-type': 'application/x-www-form-urlencoded',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: new URLSearchParams(form).toString(),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  };

  beforeAll(async () => {
    stripe = await startStripeServer({ now: () => new Date('2026-05-01T00:00:00.000Z') });
    customer = (await post('/v1/customers', { email: 'a@example.com' })).body.id;
    other = (await post('/v1/customers', { email: 'b@example.com' })).body.id;
  });
  afterAll(() => stripe.close());

  it('creates a pending item with Stripe’s fields, and replays it for the same key', async () => {
    const form = {
      customer,
      amount: '444',
      currency: 'usd',
      description: 'Overage: 37 minutes',
      'period[start]': '1767225600',
      'period[end]': '1769904000',
      'metadata[overage_charge_id]': 'ovg_1',
    };
    const created = await post('/v1/invoiceitems', form, 'key-1');
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'invoiceitem',
      amount: 444,
      currency: 'usd',
      customer,
      description: 'Overage: 37 minutes',
      discountable: true,
      invoice: null,
      livemode: false,
      metadata: { overage_charge_id: 'ovg_1' },
      parent: null,
      period: { start: 1767225600, end: 1769904000 },
      proration: false,
      quantity: 1,
    });
    expect(created.body.id).toMatch(/^ii_/);
    const again = await post('/v1/invoiceitems', form, 'key-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(created.body.id);
    expect(stripe.executed('POST', /^\/v1\/invoiceitems$/)).toBe(1);

    const list = await fetch(`${stripe.url}/v1/invoiceitems?customer=${customer}&pending=true`, {
      headers: { authorization: `Bearer ${stripe.secretKey}` },
    });
    expect(((await list.json()) as any).data.map((item: { id: string }) => item.id)).toEqual([
      created.body.id,
    ]);
  });

  it('accepts a credit (a negative amount), not discountable by default', async () => {
    const credit = await post('/v1/invoiceitems', { customer, amount: '-100', currency: 'usd' });
    expect(credit.status).toBe(200);
    expect(credit.body).toMatchObject({ amount: -100, discountable: false });
  });

  it.each([
    [{ amount: '100', currency: 'usd' }, 'parameter_missing', 'customer'],
    [{ customer: 'CUSTOMER', amount: '100' }, 'parameter_missing', 'currency'],
    [{ customer: 'CUSTOMER', amount: '100', currency: 'usd', colour: 'red' }, 'parameter_unknown', 'colour'],
    [
      { customer: 'CUSTOMER', currency: 'usd', amount: '1', unit_amount_decimal: '1.5' },
      'parameter_invalid',
      'amount',
    ],
    [{ customer: 'cus_nope', amount: '100', currency: 'usd' }, 'resource_missing', 'customer'],
    [{ customer: 'CUSTOMER', amount: '12.5', currency: 'usd' }, 'parameter_invalid_integer', 'amount'],
    [{ customer: 'CUSTOMER', amount: '100', currency: 'USD' }, 'parameter_invalid', 'currency'],
  ])('refuses %j: %s on %s', async (form, code, param) => {
    const filled = Object.fromEntries(
      Object.entries(form).map(([k, v]) => [k, v === 'CUSTOMER' ? customer : v]),
    );
    const refused = await post('/v1/invoiceitems', filled);
    expect(refused.status, JSON.stringify(refused.body)).toBeGreaterThanOrEqual(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it('refuses another customer’s subscription', async () => {
    const price = (
      await post('/v1/prices', {
        currency: 'usd',
        unit_amount: '1000',
        'recurring[interval]': 'month',
        'product_data[name]': 'Plan',
      })
    ).body.id;
    const subscription = (await post('/v1/subscriptions', { customer: other, 'items[0][price]': price })).body
      .id;
    const refused = await post('/v1/invoiceitems', {
      customer,
      subscription,
      amount: '100',
      currency: 'usd',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('subscription');
  });
});
