/**
 * A user's credit balance (minutes): read it, and grant or deduct minutes by hand. The operator
 * routes and the console call these; calls move credits through the ledger statement directly.
 */
import { recordAudit } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { notFound } from '../core/errors.js';
import { tenantOfUser } from '../users/service.js';
import { addCreditEntry, creditBalance, latestCreditEntries } from './repository.js';
import type { AddCreditsBody, CreditBalance } from './schemas.js';

/** The tenant's live user, or 404 (a user of another tenant is not found either). */
async function liveUserOf(db: Db, tenantId: string | undefined, userId: string): Promise<string> {
  const owner = await tenantOfUser(db, userId);
  if (tenantId !== undefined && owner !== tenantId) throw notFound('User');
  return owner;
}

/**
 * Appends a ledger entry of `minutes` for the user and answers the new balance. Without a tenant
 * (the operator API, which names only the user) the user's own tenant is used.
 */
export async function grantCredits(
  deps: { db: Db; clock: Clock },
  target: { tenantId?: string; userId: string },
  body: AddCreditsBody,
  defaultReason = 'operator adjustment',
): Promise<CreditBalance> {
  const tenantId = await liveUserOf(deps.db, target.tenantId, target.userId);
  const at = deps.clock.now();
  const balance = await deps.db.transaction().execute(async (tx) => {
    const after = await addCreditEntry(tx, {
      tenantId,
      userId: target.userId,
      minutes: body.minutes,
      reason: body.reason ?? defaultReason,
      at,
    });
    await recordAudit(tx, {
      action: 'credits.granted',
      tenantId,
      objectType: 'user',
      objectId: target.userId,
      fields: Object.keys(body),
      at,
    });
    return after;
  });
  return { user_id: target.userId, balance_minutes: balance ?? 0 };
}

/** The user's balance in minutes. */
export async function balanceOf(
  deps: { db: Db },
  target: { tenantId?: string; userId: string },
): Promise<CreditBalance> {
  const tenantId = await liveUserOf(deps.db, target.tenantId, target.userId);
  const balance = await creditBalance(deps.db, tenantId, target.userId);
  return { user_id: target.userId, balance_minutes: balance ?? 0 };
}

/** The user's latest credit movements (grants, period minutes, calls), newest first. */
export async function latestCredits(
  deps: { db: Db },
  target: { tenantId: string; userId: string },
  limit: number,
) {
  return latestCreditEntries(deps.db, target.tenantId, target.userId, limit);
}
