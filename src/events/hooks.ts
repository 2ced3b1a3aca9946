/** The events other features' lifecycle hooks record, each inside the change's own transaction. */
import type { Tx } from '../core/db/database.js';
import type { UserRow } from '../users/repository.js';
import { toUserListItem } from '../users/service.js';
import { recordEvent } from './record.js';

/** `user.created` with the user as the users list shows it (no plan yet). */
export async function recordUserCreated(tx: Tx, user: UserRow): Promise<void> {
  await recordEvent(tx, {
    tenantId: user.tenant_id,
    type: 'user.created',
    object: toUserListItem({ ...user, plan_id: null, plan_name: null }),
    at: user.created_at,
  });
}

/** `user.deleted` with the tombstone DELETE /users/{id} answers. */
export async function recordUserDeleted(tx: Tx, user: UserRow, at: Date): Promise<void> {
  await recordEvent(tx, {
    tenantId: user.tenant_id,
    type: 'user.deleted',
    object: { id: user.id, deleted_at: at.toISOString() },
    at,
  });
}
