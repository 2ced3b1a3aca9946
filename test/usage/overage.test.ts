/**
 * Overage at renewal: a negative balance becomes the ended period's overage once per user and
 * period (repeated and concurrent period jobs), the ledger and the balance agree; processor plans
 * bill it at once on its own invoice, paid with the card on file, in the agency's account (one item,
 * one invoice, one payment, whatever runs the job how often or dies between its steps), a declined
 * card leaves it visibly unpaid, a subscription that ends has its last period settled and billed;
 * agency plans record it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unsettledPanel } from '../../src/console/pages/usage.js';
import { ManualClock } from '../../src/core/clock.js';
import { OVERAGE_INVOICE_QUEUE } from '../../src/overage/service.js';
import { PERIOD_QUEUE } from '../../src/subscriptions/periods.js';
import {
  ADAPTERS,
  adjust,
  balance,
  createPlan,
  createTenant,
  createWorld,
  ledgerOf,
  overageOf,
  runJob,
  startUsageApp,
  subscribedUser,
  type UsageApp,
  type World,
} from './helpers.js';

describe.each(ADAPTERS)('overage with the %s processor', (adapter) => {
  const clock = new ManualClock('2026-01-10T00:00:00.000Z');
  let app: UsageApp;
  let world: World;

  beforeAll(async () => {
    app = await startUsageApp(adapter, clock);
    world = await createWorld(app.t);
  });
  afterAll(() => app.close());

  it('settles a processor plan’s negative balance once and bills it at the renewal on its own paid invoice', async () => {
    clock.set('2026-01-10T00:00:00.000Z');
    const { user, subscription } = await subscribedUser(app.t, world, world.cardPlan.id);
    expect(await balance(app.t, user.id)).toBe(100);
    expect(await adjust(app.t, user.id, -137)).toBe(-37);
    const before = { items: app.invoiceItems(), invoices: app.invoices(), payments: app.invoicePayments() };

    // The period turns; two period jobs at once, then again: one settlement.
    clock.set('2026-02-10T00:00:05.000Z');
    const payload = { subscription_id: subscription.id };
    await Promise.all([
      runJob(app.t, PERIOD_QUEUE, world.tenant.id, payload),
      runJob(app.t, PERIOD_QUEUE, world.tenant.id, payload),
    ]);
    await runJob(app.t, PERIOD_QUEUE, world.tenant.id, payload);
    let charges = await overageOf(app.t, user.id);
    expect(charges).toHaveLength(1);
    expect(charges[0].status).toBe('pending');

    // Two invoice jobs at once, then the runner's, then again: one item, one invoice, one payment.
    const job = { overage_charge_id: charges[0].id };
    await Promise.all([
      runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, job),
      runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, job),
    ]);
    await app.t.services.jobRunner.drain();
    await runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, job);

    charges = await overageOf(app.t, user.id);
    expect(charges[0]).toMatchObject({
      subscription_id: subscription.id,
      plan_id: world.cardPlan.id,
      minutes: 37,
      overage_rate: 0.12,
      amount: 444,
      currency: 'usd',
      provider: 'processor',
      status: 'paid',
      processor: adapter,
      failure_message: null,
    });
    expect(charges[0].period_start.toISOString()).toBe('2026-01-10T00:00:00.000Z');
    expect(charges[0].period_end.toISOString()).toBe('2026-02-10T00:00:00.000Z');
    expect(charges[0].processor_invoice_item_id).toMatch(/^ii_/);
    expect(charges[0].processor_invoice_id).toMatch(/^in_/);
    expect(app.invoiceItems()).toBe(before.items + 1);
    expect(app.invoices()).toBe(before.invoices + 1);
    expect(app.invoicePayments()).toBe(before.payments + 1);

    // Its own invoice, paid at the renewal: the overage alone, charged to the card on file.
    const invoice = await app.invoiceDoc(charges[0].processor_invoice_id!);
    expect(invoice).toMatchObject({
      status: 'paid',
      total: 444,
      amount_due: 444,
      amount_paid: 444,
      currency: 'usd',
      billing_reason: 'manual',
      collection_method: 'charge_automatically',
      auto_advance: false,
      parent: null,
      metadata: { overage_charge_id: charges[0].id, subscription_id: subscription.id },
    });

    // The balance went back to 0 by the overage entry, then the new period granted its 100.
    expect(await balance(app.t, user.id)).toBe(100);
    const ledger = await ledgerOf(app.t, user.id);
    expect(ledger.sum).toBe(100);
    const overage = ledger.rows.filter((row) => row.reason === 'overage');
    expect(overage).toEqual([
      { minutes: 37, reason: 'overage', reference: `overage:${subscription.id}:2026-01-10T00:00:00.000Z` },
    ]);

    // The next renewal does not take the item again: its invoice is the price alone.
    const customer = charges[0].processor_customer_id!;
    clock.set('2026-03-10T00:00:05.000Z');
    await app.t.services.jobRunner.drain();
    const item = await app.t.services.processor.findInvoiceItem({
      customerId: customer,
      metadataKey: 'overage_charge_id',
      metadataValue: charges[0].id,
      createdSince: new Date('2026-01-01T00:00:00.000Z'),
    });
    expect(item).toMatchObject({ amount: 444, invoiceId: charges[0].processor_invoice_id });
    const engine = app.stripe?.engine ?? app.simulated!.engine;
    const [renewal] = (await engine.invoices.list({ customer })).data;
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', amount_due: 1000, status: 'paid' });
    // A period within the balance: no overage.
    expect(await overageOf(app.t, user.id)).toHaveLength(1);
    expect(app.invoices()).toBe(before.invoices + 1);
  });

  it('records an agency plan’s overage without calling the processor', async () => {
    clock.set('2026-04-01T12:00:00.000Z');
    const before = app.invoiceItems();
    const { user, subscription } = await subscribedUser(app.t, world, world.agencyPlan.id);
    expect(await adjust(app.t, user.id, -61)).toBe(-11);
    clock.set('2026-05-01T12:00:01.000Z');
    await app.t.services.jobRunner.drain();
    await runJob(app.t, PERIOD_QUEUE, world.tenant.id, { subscription_id: subscription.id });

    const charges = await overageOf(app.t, user.id);
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({
      minutes: 11,
      amount: 220,
      currency: 'eur',
      provider: 'agency',
      status: 'recorded',
      processor: null,
      processor_invoice_item_id: null,
    });
    expect(app.invoiceItems()).toBe(before);
    expect(await balance(app.t, user.id)).toBe(50);
    expect((await ledgerOf(app.t, user.id)).sum).toBe(50);
  });

  it('adopts the invoice item whose answer was lost instead of making another', async () => {
    if (!app.stripe) return;
    clock.set('2026-06-01T00:00:00.000Z');
    const { user, subscription } = await subscribedUser(app.t, world, world.cardPlan.id);
    await adjust(app.t, user.id, -105);
    const before = app.invoiceItems();
    // Made at the processor, the answer lost (the SDK sends once more when the connection is cut).
    app.stripe.fault({ method: 'POST', path: /^\/v1\/invoiceitems$/, mode: 'drop-after', times: 2 });
    clock.set('2026-07-01T00:00:01.000Z');
    await app.t.services.jobRunner.drain();
    let [charge] = await overageOf(app.t, user.id);
    expect(charge).toMatchObject({ minutes: 5, amount: 60, status: 'pending' });
    expect(app.invoiceItems()).toBe(before + 1);

    // The job's retry finds it by its metadata.
    await runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, { overage_charge_id: charge.id });
    [charge] = await overageOf(app.t, user.id);
    expect(charge.status).toBe('paid');
    expect(app.invoiceItems()).toBe(before + 1);
    expect(subscription.id).toBe(charge.subscription_id);
  });

  it('finishes on the next run, without duplicates, when the job died after any of its steps', async () => {
    for (const [step, month] of [
      ['createInvoiceItem', '08'],
      ['createInvoice', '09'],
      ['finalizeInvoice', '10'],
      ['payInvoice', '11'],
    ] as const) {
      clock.set(`2026-${month}-01T00:00:00.000Z`);
      const { user } = await subscribedUser(app.t, world, world.cardPlan.id);
      await adjust(app.t, user.id, -110);
      const before = { items: app.invoiceItems(), invoices: app.invoices(), payments: app.invoicePayments() };
      app.loseAnswer(step);
      clock.set(`2026-${String(Number(month) + 1).padStart(2, '0')}-01T00:00:01.000Z`);
      await app.t.services.jobRunner.drain();
      let [charge] = await overageOf(app.t, user.id);
      expect(charge, step).toMatchObject({ minutes: 10, amount: 120, status: 'pending' });

      await runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, { overage_charge_id: charge.id });
      await runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, { overage_charge_id: charge.id });
      [charge] = await overageOf(app.t, user.id);
      expect(charge.status, step).toBe('paid');
      expect(app.invoiceItems(), step).toBe(before.items + 1);
      expect(app.invoices(), step).toBe(before.invoices + 1);
      expect(app.invoicePayments(), step).toBe(before.payments + 1);
      const invoice = await app.invoiceDoc(charge.processor_invoice_id!);
      expect(invoice, step).toMatchObject({ status: 'paid', amount_paid: 120 });
    }
  });

  it('adopts the invoice whose creation or payment answer was lost at Stripe', async () => {
    if (!app.stripe) return;
    for (const [path, month] of [
      [/^\/v1\/invoices$/, '01'],
      [/^\/v1\/invoices\/[^/]+\/pay$/, '03'],
    ] as const) {
      clock.set(`2027-${month}-01T00:00:00.000Z`);
      const { user } = await subscribedUser(app.t, world, world.cardPlan.id);
      await adjust(app.t, user.id, -101);
      const before = { invoices: app.invoices(), payments: app.invoicePayments() };
      app.stripe.fault({ method: 'POST', path, mode: 'drop-after', times: 2 });
      clock.set(`2027-${String(Number(month) + 1).padStart(2, '0')}-01T00:00:01.000Z`);
      await app.t.services.jobRunner.drain();
      let [charge] = await overageOf(app.t, user.id);
      expect(charge.status).toBe('pending');

      await runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, { overage_charge_id: charge.id });
      [charge] = await overageOf(app.t, user.id);
      expect(charge).toMatchObject({ status: 'paid', amount: 12 });
      expect(app.invoices()).toBe(before.invoices + 1);
      expect(app.invoicePayments()).toBe(before.payments + 1);
    }
  });

  it('leaves the charge visibly unpaid, with the processor’s message, when the card is declined', async () => {
    clock.set('2027-06-01T00:00:00.000Z');
    const { user } = await subscribedUser(app.t, world, world.cardPlan.id);
    await adjust(app.t, user.id, -120);
    const card = await app.t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, {
      token: 'pm_card_chargeDeclined',
    });
    expect(card.status, card.raw).toBe(200);
    clock.set('2027-07-01T00:00:01.000Z');
    await app.t.services.jobRunner.drain();

    const [charge] = await overageOf(app.t, user.id);
    expect(charge).toMatchObject({
      amount: 240,
      status: 'unpaid',
      failure_message: 'Your card was declined.',
    });
    expect(await app.invoiceDoc(charge.processor_invoice_id!)).toMatchObject({
      status: 'open',
      amount_due: 240,
      amount_paid: 0,
      attempt_count: 1,
    });
    // Settled: the job again does not charge again.
    const payments = app.invoicePayments();
    await runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, { overage_charge_id: charge.id });
    expect(app.invoicePayments()).toBe(payments);

    const usage = await world.tenant.request('GET', `/api/v1/usage?user_id=${user.id}&period=2027-07`);
    expect(usage.status, usage.raw).toBe(200);
    expect(usage.body.data.unsettled_overage).toEqual([
      {
        id: charge.id,
        status: 'unpaid',
        amount: 240,
        currency: 'usd',
        message: 'Your card was declined.',
        period_start: '2027-06-01T00:00:00.000Z',
        period_end: '2027-07-01T00:00:00.000Z',
      },
    ]);
    // The console's usage page lists it (rendered from the service the page calls).
    const report = await app.t.services.usage.tenantUsage(world.tenant.id, '2027-07');
    expect(report.unsettled).toMatchObject([{ id: charge.id, user_id: user.id, status: 'unpaid' }]);
    const panel = String(unsettledPanel(report));
    expect(panel).toContain('Overage not paid');
    expect(panel).toContain('Your card was declined.');
    expect(panel).toContain('$2.40');
  });

  it('settles and bills once the last period of a subscription that ends at its period end', async () => {
    clock.set('2027-09-01T00:00:00.000Z');
    const { user, subscription } = await subscribedUser(app.t, world, world.cardPlan.id);
    await adjust(app.t, user.id, -125);
    const db = app.t.services.database.db;
    const { provider_subscription_id: remoteId } = await db
      .selectFrom('subscriptions')
      .select('provider_subscription_id')
      .where('id', '=', subscription.id)
      .executeTakeFirstOrThrow();
    const engine = app.stripe?.engine ?? app.simulated!.engine;
    await engine.updateSubscription(remoteId!, { cancel_at_period_end: true });
    const before = { invoices: app.invoices(), payments: app.invoicePayments() };

    clock.set('2027-10-01T00:00:01.000Z');
    await app.t.services.jobRunner.drain();
    const payload = { subscription_id: subscription.id };
    await runJob(app.t, PERIOD_QUEUE, world.tenant.id, payload);
    await app.t.services.jobRunner.drain();

    const row = await db
      .selectFrom('subscriptions')
      .select('status')
      .where('id', '=', subscription.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('canceled');
    const charges = await overageOf(app.t, user.id);
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({ minutes: 25, amount: 300, status: 'paid' });
    expect(charges[0].period_end.toISOString()).toBe('2027-10-01T00:00:00.000Z');
    expect(app.invoices()).toBe(before.invoices + 1);
    expect(app.invoicePayments()).toBe(before.payments + 1);
    expect(await balance(app.t, user.id)).toBe(0);
    const overage = (await ledgerOf(app.t, user.id)).rows.filter((r) => r.reason === 'overage');
    expect(overage).toHaveLength(1);
  });

  it('bills the overage in the agency’s connected account, with its application fee', async () => {
    clock.set('2027-11-01T00:00:00.000Z');
    const account = adapter === 'stripe' ? 'acct_1OvgWireAgency01' : 'acct_1OvgSimAgency001';
    const tenant = await createTenant(app.t, { name: 'Connected Agency' });
    const set = await app.t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      processor_account_id: account,
      application_fee_percent: 10,
    });
    expect(set.status, set.raw).toBe(200);
    const cardPlan = await createPlan(app.t, tenant.id, {
      name: 'Card',
      provider: 'processor',
      monthly_price: 1000,
      included_minutes: 100,
      overage_rate: 0.12,
      topup_rate: 0.1,
    });
    const { user } = await subscribedUser(app.t, { tenant, cardPlan, agencyPlan: null }, cardPlan.id);
    await adjust(app.t, user.id, -105);
    clock.set('2027-12-01T00:00:01.000Z');
    await app.t.services.jobRunner.drain();

    const [charge] = await overageOf(app.t, user.id);
    expect(charge).toMatchObject({ amount: 60, status: 'paid' });
    expect(await app.invoiceDoc(charge.processor_invoice_id!, account)).toMatchObject({
      status: 'paid',
      amount_paid: 60,
      application_fee_amount: 6,
    });
    await expect(app.invoiceDoc(charge.processor_invoice_id!, null)).rejects.toThrow(/No such invoice/);
    if (app.stripe) {
      const made = app.stripe.requests.filter((r) => r.ran && /^\/v1\/invoice/.test(r.path));
      expect(made.filter((r) => r.account === account).length).toBeGreaterThanOrEqual(4);
    }
  });
});
