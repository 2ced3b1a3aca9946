/**
 * Users: provisioning (with its password hash and dashboard membership), listing, soft deletion.
 * Other features hook into the user's life inside the same transaction: the welcome-email
 * outbox on creation, subscription cancellation on deletion.
 */

import { auditNothingChanged } from '../core/audit/context.js';
import { type AuditChange, recordAudit, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor, Tx } from '../core/db/database.js';
import { isUniqueViolation } from '../core/db/database.js';
import { offsetOf, paginationBlock } from '../core/db/pagination.js';
import { ApiError, notFound } from '../core/errors.js';
import type { IdempotencyClaim, IdempotencyStore } from '../core/idempotency/store.js';
import { newId } from '../core/ids.js';
import { hashPassword } from '../core/security/passwords.js';
import { createListTotals, filterKey } from './list-totals.js';
import { updateUserProfile } from './profile-repository.js';
import {
  findUser,
  findUserListItem,
  findUserNames,
  findUserTenant,
  insertUser,
  listUsers,
  markUserDeleted,
  type UserListRow,
  type UserRow,
  updateUserStatus,
} from './repository.js';
import type {
  CreatedUser,
  CreateUserBody,
  DeletedUser,
  ListUsersQuery,
  UpdateUserBody,
  UserListItem,
  UserStatus,
} from './schemas.js';

export type UserCreatedHook = (tx: Tx, user: UserRow) => Promise<void>;
export type UserDeletedHook = (tx: Tx, user: UserRow, at: Date) => Promise<void>;

/** In-transaction extension points for other features. */
export interface UserLifecycle {
  created: UserCreatedHook[];
  deleted: UserDeletedHook[];
}

/** Operator paths name a user but no tenant: the user's tenant, or 404 when no live user has that id. */
export async function tenantOfUser(db: Executor, userId: string): Promise<string> {
  const tenantId = await findUserTenant(db, userId);
  if (!tenantId) throw notFound('User');
  return tenantId;
}

const emailTaken = () => new ApiError('conflict', 'A user with this email already exists in the tenant.');

export function toUserListItem(row: UserListRow): UserListItem {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    status: row.status,
    created_at: row.created_at.toISOString(),
    plan_id: row.plan_id,
    plan_name: row.plan_name,
  };
}

export function createUserService(deps: {
  db: Db;
  clock: Clock;
  idempotency: IdempotencyStore;
  lifecycle: UserLifecycle;
  passwordHashMemoryKib: number;
  publicBaseUrl: string;
}) {
  const { db, clock, lifecycle } = deps;
  const totals = createListTotals();

  async function createUser(
    tenantId: string,
    input: Omit<CreateUserBody, 'password'> & { password?: string },
    claim: IdempotencyClaim | undefined,
    invite?: UserCreatedHook,
  ): Promise<{ user: CreatedUser; location: string }> {
    const passwordHash =
      input.password === undefined ? null : await hashPassword(input.password, deps.passwordHashMemoryKib);
    const now = clock.now();
    const id = newId('usr');
    const created: CreatedUser = {
      id,
      email: input.email,
      name: input.name,
      created_at: now.toISOString(),
    };
    const location = `${deps.publicBaseUrl}/api/v1/users/${id}`;
    try {
      await db.transaction().execute(async (tx) => {
        const user = await insertUser(tx, {
          id,
          tenant_id: tenantId,
          email: input.email,
          name: input.name,
          phone: input.phone ?? null,
          status: 'active',
          password_hash: passwordHash,
          created_at: now,
          updated_at: now,
        });
        for (const hook of lifecycle.created) await hook(tx, user);
        if (invite) await invite(tx, user);
        const action = invite ? 'user.invited' : 'user.created';
        await recordAudit(tx, userChange(action, tenantId, id, Object.keys(input), now));
        if (claim) {
          await deps.idempotency.recordInTx(tx, claim, {
            status: 201,
            body: { data: created },
            headers: { location },
          });
        }
      });
    } catch (error) {
      if (isUniqueViolation(error, 'users_tenant_email_live')) {
        throw emailTaken();
      }
      throw error;
    }
    return { user: created, location };
  }

  return {
    /** A page with its exact total: counted, or remembered from a count at the same users_version. */
    async list(tenantId: string, query: ListUsersQuery) {
      const listQuery = {
        status: query.status,
        search: query.search,
        sortBy: query.sort_by,
        sortOrder: query.sort_order,
        limit: query.limit,
        offset: offsetOf(query),
        now: clock.now(),
      };
      const key = filterKey(listQuery);
      const known = totals.known(tenantId);
      const knownTotal = known?.totals.get(key);
      let result = await listUsers(
        db,
        tenantId,
        listQuery,
        known && knownTotal !== undefined ? { total: knownTotal, liveUsers: known.liveUsers } : undefined,
      );
      // The tenant's users changed since that total was counted (through this process or any
      // other): a total is never answered from another version, so the page is read again, counted.
      if (result.total === null && result.version !== known?.version) {
        result = await listUsers(db, tenantId, listQuery);
      }
      totals.remember(tenantId, result.version, result.liveUsers, key, result.total);
      const total = result.total ?? (knownTotal as number);
      return { data: result.rows.map(toUserListItem), pagination: paginationBlock(query, total) };
    },

    async get(tenantId: string, userId: string): Promise<UserListItem> {
      const row = await findUserListItem(db, tenantId, userId, clock.now());
      if (!row) throw notFound('User');
      return toUserListItem(row);
    },

    /** Who the ids are (for lists of other resources that name users): one query, any number of ids. */
    async namesOf(tenantId: string, ids: readonly string[]) {
      const rows = await findUserNames(db, tenantId, [...new Set(ids)]);
      return new Map(
        rows.map((row) => [row.id, { name: row.name, email: row.email, deleted: !!row.deleted_at }]),
      );
    },

    /** Sets the user's status (approve, block, unblock); the operator API and the console call this. */
    async setStatus(tenantId: string, userId: string, status: UserStatus): Promise<UserListItem> {
      const now = clock.now();
      const updated = await db.transaction().execute(async (tx) => {
        const changed = await updateUserStatus(tx, tenantId, userId, status, now);
        if (changed)
          await recordAudit(tx, userChange('user.status_changed', tenantId, userId, ['status'], now));
        return changed;
      });
      const row = updated && (await findUserListItem(db, tenantId, userId, clock.now()));
      if (!row) throw notFound('User');
      return toUserListItem(row);
    },

    /** Changes the user's name, email or phone (PATCH /users/{id} and the console's edit form). */
    async update(tenantId: string, userId: string, changes: UpdateUserBody): Promise<UserListItem> {
      try {
        const now = clock.now();
        const updated = await writeAudited(
          db,
          (executor) => updateUserProfile(executor, tenantId, userId, changes, now),
          (row) => row && userChange('user.updated', tenantId, userId, Object.keys(changes), now),
        );
        if (!updated) throw notFound('User');
      } catch (error) {
        if (isUniqueViolation(error, 'users_tenant_email_live')) throw emailTaken();
        throw error;
      }
      return this.get(tenantId, userId);
    },

    /** Creates the user; the answer is recorded for the idempotency claim in the same transaction. */
    async create(
      tenantId: string,
      input: CreateUserBody,
      claim: IdempotencyClaim | undefined,
    ): Promise<{ user: CreatedUser; location: string }> {
      return createUser(tenantId, input, claim);
    },

    /**
     * Creates a user without a password (the console's invitation): `invite` writes the link to
     * choose one, in the user's transaction; refusals are those of `create`.
     */
    async createInvited(
      tenantId: string,
      input: Omit<CreateUserBody, 'password'>,
      claim: IdempotencyClaim | undefined,
      invite: UserCreatedHook,
    ): Promise<{ user: CreatedUser; location: string }> {
      return createUser(tenantId, input, claim, invite);
    },

    /** Soft-deletes the user; repeating it answers the same tombstone. */
    async remove(tenantId: string, userId: string): Promise<DeletedUser> {
      return db.transaction().execute(async (tx) => {
        const user = await findUser(tx, tenantId, userId, { forUpdate: true });
        if (!user) throw notFound('User');
        if (user.deleted_at) {
          auditNothingChanged();
          return { id: user.id, deleted_at: user.deleted_at.toISOString() };
        }
        const at = clock.now();
        await markUserDeleted(tx, tenantId, userId, at);
        await recordAudit(tx, userChange('user.deleted', tenantId, userId, [], at));
        for (const hook of lifecycle.deleted) await hook(tx, user, at);
        return { id: user.id, deleted_at: at.toISOString() };
      });
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;

function userChange(
  action: string,
  tenantId: string,
  userId: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId, objectType: 'user', objectId: userId, fields, at };
}
