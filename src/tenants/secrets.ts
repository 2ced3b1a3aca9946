/**
 * A tenant's SMTP password at rest: `email_smtp_url` holds the URL without it, and
 * `email_smtp_password_sealed` the password sealed by the secret box (src/core/security/secrets.ts), bound
 * to the tenant so it cannot be moved to another one. Only the sender joins them again.
 */
import type { Db } from '../core/db/database.js';
import type { SecretBox } from '../core/security/secrets.js';
import type { TenantRow } from './repository.js';

const contextOf = (tenantId: string) => `tenants.email_smtp_password:${tenantId}`;

/** The columns for a tenant's SMTP URL: the URL without its password, and the password sealed. */
export function smtpColumns(
  secrets: SecretBox,
  tenantId: string,
  smtpUrl: string,
): { email_smtp_url: string; email_smtp_password_sealed: string | null } {
  const url = new URL(smtpUrl);
  // Kept percent-encoded as written: putting it back into the URL restores the URL exactly.
  const password = url.password;
  url.password = '';
  return {
    email_smtp_url: url.toString(),
    email_smtp_password_sealed: password ? secrets.seal(password, contextOf(tenantId)) : null,
  };
}

/** The SMTP URL to connect with, password included; null when the tenant has no SMTP settings. */
export function smtpUrlOf(
  secrets: SecretBox,
  tenant: Pick<TenantRow, 'id' | 'email_smtp_url' | 'email_smtp_password_sealed'>,
): string | null {
  if (!tenant.email_smtp_url) return null;
  if (!tenant.email_smtp_password_sealed) return tenant.email_smtp_url;
  const url = new URL(tenant.email_smtp_url);
  url.password = secrets.open(tenant.email_smtp_password_sealed, contextOf(tenant.id));
  return url.toString();
}

/**
 * Start-up pass: seals the passwords still written in plain text in SMTP URLs (rows from before
 * migration 0010), and seals again with SECRETS_KEY the ones sealed with a previous key, so a
 * previous key can be dropped once every process has started with the new one. Each row is
 * rewritten only if nobody changed it meanwhile (several processes may start at once). Throws
 * when a stored password opens with none of the keys: better to refuse to start than to lose
 * every tenant's email to a forgotten SECRETS_KEY_PREVIOUS.
 */
export async function sealStoredSmtpPasswords(db: Db, secrets: SecretBox): Promise<number> {
  const rows = await db
    .selectFrom('tenants')
    .select(['id', 'email_smtp_url', 'email_smtp_password_sealed'])
    .where('email_smtp_url', 'is not', null)
    .execute();
  let sealed = 0;
  for (const row of rows) {
    const stored = row.email_smtp_url as string;
    let plaintextPassword = false;
    try {
      plaintextPassword = new URL(stored).password !== '';
    } catch {
      continue;
    }
    const current = row.email_smtp_password_sealed;
    if (!plaintextPassword && (current === null || secrets.isCurrent(current))) continue;
    // Throws (SecretError) for a password sealed with an unknown key or altered.
    const full = plaintextPassword ? stored : (smtpUrlOf(secrets, row) as string);
    const result = await db
      .updateTable('tenants')
      .set(smtpColumns(secrets, row.id, full))
      .where('id', '=', row.id)
      .where('email_smtp_url', '=', stored)
      .where((eb) =>
        current === null
          ? eb('email_smtp_password_sealed', 'is', null)
          : eb('email_smtp_password_sealed', '=', current),
      )
      .executeTakeFirst();
    sealed += Number(result.numUpdatedRows);
  }
  return sealed;
}
