/** Assertions shared by the suites: the error envelope, invalid fields, timestamps. */
import { type RawBuilder, sql } from 'kysely';
import { expect } from 'vitest';
import type { TestApp, TestResponse } from './app.js';

/** The answer is the error envelope with this status and code, and request_id equals X-Request-Id. */
export function expectError(response: TestResponse, status: number, code: string): void {
  expect({ status: response.status, body: response.body }).toMatchObject({
    status,
    body: { error: { code } },
  });
  expect(typeof response.body.error.message).toBe('string');
  expect(response.body.request_id).toBe(response.headers['x-request-id']);
  expect(Object.keys(response.body).sort()).toEqual(['error', 'request_id']);
}

/** A 422 validation_failed naming exactly these fields (order-free, each at least once). */
export function expectInvalidFields(response: TestResponse, fields: string[]): void {
  expectError(response, 422, 'validation_failed');
  const named = new Set(
    (response.body.error.details as { field?: string; issue: string }[]).map((d) => d.field),
  );
  expect([...named].sort()).toEqual([...new Set(fields)].sort());
  for (const detail of response.body.error.details) expect(typeof detail.issue).toBe('string');
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Inserts a subscription row directly (the subscriptions feature is not needed to prove the join). */
export async function insertSubscription(
  t: TestApp,
  row: {
    tenantId: string;
    userId: string;
    planId: string;
    status: string;
    start: Date;
    end: Date;
    provider?: string;
  },
): Promise<string> {
  const id = `sub_${Math.random().toString(36).slice(2)}${Date.now()}`;
  await sql`
    INSERT INTO subscriptions (id, tenant_id, user_id, plan_id, status, provider, provider_subscription_id,
      cancel_at_period_end, current_period_start, current_period_end, created_at, updated_at)
    VALUES (${id}, ${row.tenantId}, ${row.userId}, ${row.planId}, ${row.status}, ${row.provider ?? 'agency'}, NULL,
      false, ${row.start}, ${row.end}, ${row.start}, ${row.start})`.execute(t.services.database.db);
  return id;
}

/** Runs a read-only query on the app's database. */
export async function query<T>(t: TestApp, text: RawBuilder<T>): Promise<T[]> {
  const result = await text.execute(t.services.database.db);
  return result.rows;
}
