/**
 * Who is writing: a request-scoped actor, set once by the authentication of each surface (partner
 * API key, operator token, console member) or by the CLI, and read by `recordAudit` inside the
 * services' write transactions. Services never take the actor as a parameter, so no call site can
 * pass the wrong one, and a write path joins the audit log with one `recordAudit` line.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The kinds of actor. `operator_token` is the root ADMIN_TOKEN; `operator_staff` a signed-in
 * operator staff member (id: the staff member's id); `member` a console member; `api_key` a
 * partner API key (id: the key's id, never the key); `cli` a command of the voiceplane CLI
 * (id: the operating-system user); `system` work the platform does by itself.
 */
export const ACTOR_TYPES = [
  'operator_token',
  'operator_staff',
  'member',
  'api_key',
  'cli',
  'system',
] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export interface Actor {
  type: ActorType;
  id: string;
}

/** What one request (or one CLI command) knows about where a write comes from. */
export interface AuditScope {
  actor?: Actor;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  /** Entries recorded so far in this scope (the write-route guard reads it). */
  recorded: number;
  /** The write found nothing to change (a repeated delete): no entry is owed. */
  unchanged?: boolean;
}

const scopes = new AsyncLocalStorage<AuditScope>();

/** Runs `work` (and everything it awaits) in `scope`. */
export function runInAuditScope<T>(scope: AuditScope, work: () => T): T {
  return scopes.run(scope, work);
}

/** The scope of the running request or command, if any. */
export function currentAuditScope(): AuditScope | undefined {
  return scopes.getStore();
}

/** Names the actor of the running request (called by the surfaces' authentication). */
export function actAs(actor: Actor): void {
  const scope = scopes.getStore();
  if (scope) scope.actor = actor;
}

/** Says the running write changed nothing (a repeated delete, an unchanged setting): no entry is owed. */
export function auditNothingChanged(): void {
  const scope = scopes.getStore();
  if (scope) scope.unchanged = true;
}

/** The operator's root token: one actor, whatever the token's value. */
export const OPERATOR_TOKEN_ACTOR: Actor = { type: 'operator_token', id: 'admin_token' };
