/**
 * A tenant's do-not-call list (platform contract §2): E.164 numbers no call may be placed to.
 * Adding a listed number again changes nothing and answers the existing entry.
 */
import { type AuditChange, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { notFound } from '../core/errors.js';
import {
  countEntries,
  type DoNotCallRow,
  deleteEntry,
  findEntry,
  insertEntry,
  listEntries,
} from './repository.js';
import type { AddDoNotCallBody, DoNotCallEntry, ListDoNotCallQuery } from './schemas.js';

const toEntry = (row: DoNotCallRow): DoNotCallEntry => ({
  phone_number: row.phone_number,
  reason: row.reason,
  created_at: row.created_at.toISOString(),
});

const missing = () => notFound('Do-not-call entry');

export function createDoNotCallService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** Lists the number; `created` is false when it was already listed (the entry is then unchanged). */
    async add(
      tenantId: string,
      input: AddDoNotCallBody,
    ): Promise<{ entry: DoNotCallEntry; created: boolean }> {
      // Entries are never updated, only inserted and deleted: a conflict means the number is
      // listed, unless a concurrent delete removed it in between; then the add is tried again.
      for (;;) {
        const now = clock.now();
        const inserted = await writeAudited(
          db,
          (executor) =>
            insertEntry(executor, {
              tenant_id: tenantId,
              phone_number: input.phone_number,
              reason: input.reason ?? null,
              created_at: now,
            }),
          (added) =>
            added && entryChange('do_not_call.added', tenantId, input.phone_number, Object.keys(input), now),
        );
        if (inserted) return { entry: toEntry(inserted), created: true };
        const existing = await findEntry(db, tenantId, input.phone_number);
        if (existing) return { entry: toEntry(existing), created: false };
      }
    },

    async list(tenantId: string, query: ListDoNotCallQuery) {
      const filter = { phoneNumber: query.phone_number };
      return listPage(
        query,
        (limit, offset) => listEntries(db, tenantId, filter, limit, offset),
        () => countEntries(db, tenantId, filter),
        toEntry,
      );
    },

    async get(tenantId: string, phoneNumber: string): Promise<DoNotCallEntry> {
      const row = await findEntry(db, tenantId, phoneNumber);
      if (!row) throw missing();
      return toEntry(row);
    },

    async remove(tenantId: string, phoneNumber: string): Promise<DoNotCallEntry> {
      const row = await writeAudited(
        db,
        (executor) => deleteEntry(executor, tenantId, phoneNumber),
        (removed) => removed && entryChange('do_not_call.removed', tenantId, phoneNumber, [], clock.now()),
      );
      if (!row) throw missing();
      return toEntry(row);
    },
  };
}

export type DoNotCallService = ReturnType<typeof createDoNotCallService>;

function entryChange(
  action: string,
  tenantId: string,
  phoneNumber: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId, objectType: 'do_not_call_entry', objectId: phoneNumber, fields, at };
}
