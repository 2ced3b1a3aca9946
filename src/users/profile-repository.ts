/** The SQL of a user's profile edit (PATCH /api/v1/users/{id}). */
import type { Executor } from '../core/db/database.js';

/** Changes the profile fields given; undefined when the user does not exist or is deleted. */
export async function updateUserProfile(
  db: Executor,
  tenantId: string,
  userId: string,
  changes: { name?: string; email?: string; phone?: string | null },
  at: Date,
) {
  return db
    .updateTable('users')
    .set({ ...changes, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
}
