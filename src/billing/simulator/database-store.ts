/**
 * The simulator's objects in the database (table simulated_processor_objects), so the simulated
 * processor's customers and subscriptions survive a restart, as Stripe's side would. The rows are
 * the simulator's own storage: only this store writes them.
 */
import { sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { Db } from '../../core/db/database.js';
import type { EngineStore, StoredObject, Subscription } from './objects.js';

export interface SimulatedProcessorObjectsTable {
  id: string;
  kind: string;
  tenant_id: string | null;
  doc: unknown;
  created_at: Date;
  updated_at: Date;
}

declare module '../../core/db/database.js' {
  interface Tables {
    simulated_processor_objects: SimulatedProcessorObjectsTable;
  }
}

export function databaseStore(db: Db, clock: Clock): EngineStore {
  return {
    async get(id) {
      const row = await db
        .selectFrom('simulated_processor_objects')
        .select('doc')
        .where('id', '=', id)
        .executeTakeFirst();
      // Written by `put` below, so the document is one of the simulator's objects.
      return (row?.doc ?? undefined) as StoredObject | undefined;
    },
    async put(doc, tenantId) {
      const now = clock.now();
      await db
        .insertInto('simulated_processor_objects')
        .values({
          id: doc.id,
          kind: doc.object,
          tenant_id: tenantId,
          doc: JSON.stringify(doc),
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.column('id').doUpdateSet({ doc: JSON.stringify(doc), updated_at: now }))
        .execute();
    },
    async subscriptionsOf(customerId) {
      const rows = await db
        .selectFrom('simulated_processor_objects')
        .select('doc')
        .where('kind', '=', 'subscription')
        .where(sql`doc ->> 'customer'`, '=', customerId)
        .execute();
      return rows.map((row) => row.doc as Subscription);
    },
  };
}
