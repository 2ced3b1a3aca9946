/** Credit entries: the ledger row and the balance move in one statement, once per reference, on both engines. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCreditEntry } from '../../src/credits/repository.js';
import { createTenant, createUser, startTestApp, type TestApp } from '../support/app.js';
import { recordStatements } from '../support/statements.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const balance = async (userId: string) =>
  (await t.admin('GET', `/admin/v1/users/${userId}/credits`)).body.data.balance_minutes as number;

describe('credit entries', () => {
  it('append an entry and move the balance in one statement, once per reference', async () => {
    const tenant = await createTenant(t);
    const user = await createUser(tenant);
    const db = t.services.database.db;
    const entry = { tenantId: tenant.id, userId: user.id, minutes: 30, reason: 'grant', at: new Date() };

    let answered: (number | undefined)[] = [];
    const sent = await recordStatements(async () => {
      answered = [
        await addCreditEntry(db, { ...entry, reference: 'grant:once' }),
        await addCreditEntry(db, { ...entry, reference: 'grant:once' }),
        await addCreditEntry(db, { ...entry, minutes: -5 }),
      ];
    });
    expect(answered).toEqual([30, undefined, 25]);
    expect(sent.map((s) => s.name)).toEqual(['credits_add_entry', 'credits_add_entry', 'credits_add_entry']);
    expect(await balance(user.id)).toBe(25);
  });
});
