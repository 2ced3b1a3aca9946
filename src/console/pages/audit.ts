/**
 * The audit log in the console (docs/audit.md): the tenant's entries — who changed what, when and
 * from where — with the API's filters by actor, action, object and date. Owners and admins only:
 * the log names members, keys and addresses. services.audit.
 */
import { ListAuditEventsQuery } from '../../audit/schemas.js';
import { ApiError } from '../../core/errors.js';
import { type AuditFilterForm, auditFilters, auditQueryOf, auditTable } from '../../web/audit-log.js';
import { fieldIssues, validated } from '../../web/forms.js';
import { html } from '../../web/html.js';
import { memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

const PAGE_SIZE = 50;
const PATH = '/console/audit';

export const auditPages = consolePages(['audit'], async (app, { audit }) => {
  app.get<{ Querystring: AuditFilterForm }>(
    '/audit',
    { config: { consoleAccess: 'admin' } },
    async (request, reply) => {
      const form: AuditFilterForm = { ...request.query, tenant_id: undefined };
      const page = form.page && /^\d{1,9}$/.test(form.page) && Number(form.page) > 0 ? Number(form.page) : 1;
      const { query, issues } = auditQueryOf(form);
      let result: Awaited<ReturnType<typeof audit.listForTenant>> | undefined;
      let problems = issues;
      if (Object.keys(issues).length === 0) {
        try {
          const filters = Object.fromEntries(
            Object.entries(query).filter(([, value]) => value !== undefined),
          );
          result = await audit.listForTenant(
            memberTenantId(request),
            validated(ListAuditEventsQuery, { page, limit: PAGE_SIZE, ...filters }),
          );
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 422) throw error;
          problems = fieldIssues(error);
        }
      }
      const filtered = Object.values(query).some((value) => value !== undefined);
      return sendPage(request, reply, {
        title: 'Audit log',
        section: 'audit',
        status: result ? 200 : 422,
        body: html`<p class="subtle">Every change made in your agency — by your API keys, your console members and the platform’s operator — with who made it, when and from where. Only the names of changed fields are kept, never their values. Entries are kept 400 days.</p>
${auditFilters({ action: PATH, form, issues: problems })}
${result && auditTable({ path: PATH, result, form, filtered })}`,
      });
    },
  );
});
