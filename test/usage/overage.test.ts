/**
 * Overage at renewal: a negative balance becomes the ended period's overage once per user and
 * period (repeated and concurrent period jobs), the ledger and the balance agree, processor plans
 * get one invoice item (found again, not made twice, when its answer was lost) that the next
 * renewal invoice takes, agency plans record it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { OVERAGE_INVOICE_QUEUE } from '../../src/overage/service.js';
import { PERIOD_QUEUE } from '../../src/subscriptions/periods.js';
import {
  ADAPTERS,
  adjust,
  balance,
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

  it('settles a processor plan’s negative balance once, invoices it once, and the next invoice takes it', async () => {
    clock.set('2026-01-10T00:00:00.000Z');
    const { user, subscription } = await subscribedUser(app.t, world, world.cardPlan.id);
    expect(await balance(app.t, user.id)).toBe(100);
    expect(await adjust(app.t, user.id, -137)).toBe(-37);

    // The period turns; two period jobs at once, then again: one settlement.
    clock.set('2026-02-10T00:00:05.000Z');
    const payload = { subscription_id: subscription.id };
    await Promise.all([
      runJob(app.t, PERIOD_QUEUE, world.tenant.id, payload),
      runJob(app.t, PERIOD_QUEUE, world.tenant.id, payload),
    ]);
    await app.t.services.jobRunner.drain();
    await runJob(app.t, PERIOD_QUEUE, world.tenant.id, payload);

    const charges = await overageOf(app.t, user.id);
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({
      subscription_id: subscription.id,
      plan_id: world.cardPlan.id,
      minutes: 37,
      overage_rate: 0.12,
      amount: 444,
      currency: 'usd',
      provider: 'processor',
      status: 'invoiced',
      processor: adapter,
    });
    expect(charges[0].period_start.toISOString()).toBe('2026-01-10T00:00:00.000Z');
    expect(charges[0].period_end.toISOString()).toBe('2026-02-10T00:00:00.000Z');
    expect(charges[0].processor_invoice_item_id).toMatch(/^ii_/);
    expect(app.invoiceItems()).toBe(1);

    // The balance went back to 0 by the overage entry, then the new period granted its 100.
    expect(await balance(app.t, user.id)).toBe(100);
    const ledger = await ledgerOf(app.t, user.id);
    expect(ledger.sum).toBe(100);
    const overage = ledger.rows.filter((row) => row.reason === 'overage');
    expect(overage).toEqual([
      { minutes: 37, reason: 'overage', reference: `overage:${subscription.id}:2026-01-10T00:00:00.000Z` },
    ]);

    // The invoice job again: nothing more at the processor.
    await runJob(app.t, OVERAGE_INVOICE_QUEUE, world.tenant.id, { overage_charge_id: charges[0].id });
    expect(app.invoiceItems()).toBe(1);

    const customer = charges[0].processor_customer_id!;
    const item = await app.t.services.processor.findInvoiceItem({
      customerId: customer,
      metadataKey: 'overage_charge_id',
      metadataValue: charges[0].id,
      createdSince: new Date('2026-01-01T00:00:00.000Z'),
    });
    expect(item).toMatchObject({
      id: charges[0].processor_invoice_item_id,
      amount: 444,
      currency: 'usd',
      invoiceId: null,
    });

    // The next renewal's invoice takes the item (the price plus the overage).
    clock.set('2026-03-10T00:00:05.000Z');
    await app.t.services.jobRunner.drain();
    const taken = await app.t.services.processor.findInvoiceItem({
      customerId: customer,
      metadataKey: 'overage_charge_id',
      metadataValue: charges[0].id,
      createdSince: new Date('2026-01-01T00:00:00.000Z'),
    });
    expect(taken?.invoiceId).toMatch(/^in_/);
    if (app.simulated) {
      const invoice = await app.t.services.database.db
        .selectFrom('simulated_processor_objects')
        .select('doc')
        .where('id', '=', taken!.invoiceId!)
        .executeTakeFirstOrThrow();
      expect((invoice.doc as { amount_due: number }).amount_due).toBe(1000 + 444);
    }
    // A period within the balance: no overage.
    expect(await overageOf(app.t, user.id)).toHaveLength(1);
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
    expect(charge.status).toBe('invoiced');
    expect(app.invoiceItems()).toBe(before + 1);
    expect(subscription.id).toBe(charge.subscription_id);
  });
});
