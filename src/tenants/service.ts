/** Tenants (one per partner agency) and their email provider settings. */

import type { ProcessorAccounts } from '../billing/accounts.js';
import { type AuditChange, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { type FieldIssue, notFound, validationFailed } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { checkHost, type HostResolver } from '../core/security/outbound-addresses.js';
import type { SecretBox } from '../core/security/secrets.js';
import {
  countTenants,
  findTenant,
  findTenantNames,
  insertTenant,
  listTenants,
  type TenantRow,
  updateTenant,
  updateTenantSuspension,
} from './repository.js';
import type {
  CreateTenantBody,
  EmailSettingsInput,
  ListTenantsQuery,
  Tenant,
  UpdateTenantBody,
} from './schemas.js';
import { smtpColumns, smtpUrlOf } from './secrets.js';

/** The console's view of a tenant's email settings (never the password). */
export interface ConsoleEmailSettings {
  smtp_url: string;
  from: string;
  password_set: boolean;
}

const ADDRESS = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/;

/** Checks an SMTP URL and a sender; returns the problems, field names under `email.`. */
export function checkEmailSettings(settings: EmailSettingsInput): FieldIssue[] {
  const issues: FieldIssue[] = [];
  let url: URL | undefined;
  try {
    url = new URL(settings.smtp_url);
  } catch {
    issues.push({ field: 'email.smtp_url', issue: 'must be a valid URL.' });
  }
  if (url && url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    issues.push({ field: 'email.smtp_url', issue: 'must use smtp:// or smtps://.' });
  } else if (url && !url.hostname) {
    issues.push({ field: 'email.smtp_url', issue: 'must name a host.' });
  }
  const from = settings.from.trim();
  const address = /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from;
  if (!ADDRESS.test(address))
    issues.push({ field: 'email.from', issue: 'must be an email address, optionally as "Name <address>".' });
  return issues;
}

/** The same SMTP server and account: scheme, host, port (the scheme's default when absent) and user. */
function sameSmtpAccount(a: URL, b: URL): boolean {
  const port = (url: URL) => url.port || (url.protocol === 'smtps:' ? '465' : '25');
  return (
    a.protocol === b.protocol &&
    a.hostname.toLowerCase() === b.hostname.toLowerCase() &&
    port(a) === port(b) &&
    a.username === b.username
  );
}

/** The SMTP URL as shown to anyone: the password removed. */
export function redactSmtpUrl(smtpUrl: string): string {
  try {
    const url = new URL(smtpUrl);
    url.password = '';
    return url.toString();
  } catch {
    return 'smtp://invalid';
  }
}

/** The partner API's default bucket, shown for tenants without numbers of their own. */
export interface PartnerLimitDefault {
  perSecond: number;
  burst: number;
}

export function toTenant(row: TenantRow, partnerDefault: PartnerLimitDefault): Tenant {
  return {
    id: row.id,
    name: row.name,
    email:
      row.email_smtp_url && row.email_from
        ? { smtp_url: redactSmtpUrl(row.email_smtp_url), from: row.email_from }
        : null,
    rate_limit:
      row.rate_limit_per_second && row.rate_limit_burst
        ? { requests_per_second: row.rate_limit_per_second, burst: row.rate_limit_burst }
        : { requests_per_second: partnerDefault.perSecond, burst: partnerDefault.burst },
    max_concurrent_calls: row.max_concurrent_calls,
    low_balance_minutes: row.low_balance_minutes,
    processor_account_id: row.processor_account_id,
    application_fee_percent:
      row.application_fee_percent === null ? null : Number(row.application_fee_percent),
    suspended_at: row.suspended_at?.toISOString() ?? null,
    suspended_reason: row.suspended_reason,
    created_at: row.created_at.toISOString(),
  };
}

export function createTenantService(deps: {
  db: Db;
  clock: Clock;
  partnerLimitDefault: PartnerLimitDefault;
  /** Seals the SMTP password before it is stored. */
  secrets: SecretBox;
  /** Where a tenant's SMTP server may be (SMTP_ALLOW_PRIVATE, the resolver). */
  smtpOutbound: { allowPrivate: boolean; resolve: HostResolver };
  /** Checks a change of the processor account (409 once the tenant has processor objects). */
  processorAccounts: ProcessorAccounts;
}) {
  const { db, clock } = deps;

  async function emailColumns(tenantId: string, email: EmailSettingsInput | null) {
    if (email === null) return { email_smtp_url: null, email_smtp_password_sealed: null, email_from: null };
    const issues = checkEmailSettings(email);
    // A host that does not resolve yet is kept (DNS may be set up after the settings); one that
    // is or resolves to an address of the platform's own network is refused, with the sender's
    // problems if it has any: every offending field at once.
    if (!deps.smtpOutbound.allowPrivate && !issues.some((issue) => issue.field === 'email.smtp_url')) {
      const host = await checkHost(new URL(email.smtp_url).hostname, deps.smtpOutbound);
      if (!host.ok && host.reason === 'forbidden')
        issues.push({ field: 'email.smtp_url', issue: host.issue });
    }
    if (issues.length > 0) throw validationFailed(issues);
    return { ...smtpColumns(deps.secrets, tenantId, email.smtp_url), email_from: email.from.trim() };
  }

  async function update(tenantId: string, input: UpdateTenantBody): Promise<Tenant> {
    const now = clock.now();
    const changes = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.email !== undefined ? await emailColumns(tenantId, input.email) : {}),
      ...(input.rate_limit !== undefined
        ? {
            rate_limit_per_second: input.rate_limit?.requests_per_second ?? null,
            rate_limit_burst: input.rate_limit?.burst ?? null,
          }
        : {}),
      ...(input.max_concurrent_calls !== undefined
        ? { max_concurrent_calls: input.max_concurrent_calls }
        : {}),
      ...(input.low_balance_minutes !== undefined ? { low_balance_minutes: input.low_balance_minutes } : {}),
      updated_at: now,
    };
    const accountChange =
      input.processor_account_id !== undefined || input.application_fee_percent !== undefined;
    const audited = (updated: object | undefined) =>
      updated !== undefined && tenantChange(tenantId, input, now);
    const row = accountChange
      ? await db.transaction().execute(async (tx) => {
          const account = await deps.processorAccounts.columnsFor(tx, tenantId, input);
          return writeAudited(
            tx,
            (executor) => updateTenant(executor, tenantId, { ...changes, ...account }),
            audited,
          );
        })
      : await writeAudited(db, (executor) => updateTenant(executor, tenantId, changes), audited);
    if (accountChange) deps.processorAccounts.forget(tenantId);
    if (!row) throw notFound('Tenant');
    return toTenant(row, deps.partnerLimitDefault);
  }

  return {
    update,

    /** The console's view of the email settings: the URL without its password, and whether one is stored. */
    async emailSettings(tenantId: string): Promise<ConsoleEmailSettings | null> {
      const row = await findTenant(db, tenantId);
      if (!row) throw notFound('Tenant');
      if (!row.email_smtp_url || !row.email_from) return null;
      return {
        smtp_url: redactSmtpUrl(row.email_smtp_url),
        from: row.email_from,
        password_set: row.email_smtp_password_sealed !== null,
      };
    },

    /**
     * Saves the email settings from the console through the same path as the operator's PATCH;
     * the password comes apart from the URL. A blank password keeps the stored one only for the
     * same server and account (scheme, host, port and user unchanged): pointed anywhere else, the
     * stored password would be handed to the new server, so it must be typed again.
     */
    async setEmailSettings(
      tenantId: string,
      input: { smtp_url: string; from: string; password?: string },
    ): Promise<Tenant> {
      let smtpUrl = input.smtp_url.trim();
      // The URL and sender first: a password question about a URL that is not one would mislead.
      const issues = checkEmailSettings({ smtp_url: smtpUrl, from: input.from });
      if (issues.length > 0) throw validationFailed(issues);
      try {
        const url = new URL(smtpUrl);
        if (input.password) url.password = encodeURIComponent(input.password);
        else if (!url.password) {
          const row = await findTenant(db, tenantId);
          const stored = row ? smtpUrlOf(deps.secrets, row) : null;
          const storedUrl = stored ? new URL(stored) : null;
          if (storedUrl?.password) {
            if (!sameSmtpAccount(url, storedUrl)) {
              throw validationFailed([
                {
                  field: 'email.smtp_password',
                  issue:
                    'must be entered again: the server or user changed, so the stored password is not reused.',
                },
              ]);
            }
            url.password = storedUrl.password;
          }
        }
        smtpUrl = url.toString();
      } catch (error) {
        if (!(error instanceof TypeError)) throw error;
        // Not a URL: the settings check below says so beside the field.
      }
      return update(tenantId, { email: { smtp_url: smtpUrl, from: input.from } });
    },

    /** A new tenant; `executor` lets a caller create it in its own transaction (with its first owner). */
    async create(input: CreateTenantBody, executor: Executor = db): Promise<Tenant> {
      const now = clock.now();
      const id = newId('ten');
      const columns = await emailColumns(id, input.email ?? null);
      const row = await writeAudited(
        executor,
        (executor) =>
          insertTenant(executor, { id, name: input.name, ...columns, created_at: now, updated_at: now }),
        () => ({
          action: 'tenant.created',
          tenantId: id,
          objectType: 'tenant',
          objectId: id,
          fields: Object.keys(input),
          at: now,
        }),
      );
      return toTenant(row, deps.partnerLimitDefault);
    },

    /**
     * Suspends the tenant (a repeat keeps the first time and replaces the note) or lifts the
     * suspension (`null`). Only the two columns change: nothing of the tenant is deleted.
     */
    async setSuspension(tenantId: string, suspension: { reason: string | null } | null): Promise<Tenant> {
      const at = clock.now();
      const row = await writeAudited(
        db,
        (executor) => updateTenantSuspension(executor, tenantId, at, suspension),
        (updated) =>
          updated && {
            action: suspension ? 'tenant.suspended' : 'tenant.unsuspended',
            tenantId,
            objectType: 'tenant',
            objectId: tenantId,
            fields: suspension ? ['suspended_at', 'suspended_reason'] : ['suspended_at'],
            at,
          },
      );
      if (!row) throw notFound('Tenant');
      return toTenant(row, deps.partnerLimitDefault);
    },

    async get(tenantId: string): Promise<Tenant> {
      const row = await findTenant(db, tenantId);
      if (!row) throw notFound('Tenant');
      return toTenant(row, deps.partnerLimitDefault);
    },

    /** Names to show beside tenant ids (operator pages): one read for a page's ids. */
    namesOf(tenantIds: Iterable<string | null>): Promise<Map<string, string>> {
      const ids = [...new Set([...tenantIds].filter((id): id is string => id !== null))];
      return findTenantNames(db, ids);
    },

    async list(query: ListTenantsQuery) {
      return listPage(
        query,
        (limit, offset) =>
          listTenants(db, { sortBy: query.sort_by, sortOrder: query.sort_order, limit, offset }),
        () => countTenants(db),
        (row: TenantRow) => toTenant(row, deps.partnerLimitDefault),
      );
    },
  };
}

export type TenantService = ReturnType<typeof createTenantService>;

/** A tenant's audit entry. */
function tenantChange(tenantId: string, input: UpdateTenantBody, at: Date): AuditChange {
  return {
    action: 'tenant.updated',
    tenantId,
    objectType: 'tenant',
    objectId: tenantId,
    fields: Object.keys(input),
    at,
  };
}
