/**
 * The audit log of the whole platform (docs/audit.md): every tenant's entries and the platform's
 * own (staff, the brand, jobs), filtered by tenant, actor, action, object and date, as
 * GET /admin/v1/audit-events answers them. Every staff role reads it.
 */
import { ListOperatorAuditEventsQuery } from '../../../audit/schemas.js';
import { ApiError } from '../../../core/errors.js';
import { type AuditFilterForm, auditFilters, auditQueryOf, auditTable } from '../../../web/audit-log.js';
import { fieldIssues, validated } from '../../../web/forms.js';
import { html } from '../../../web/html.js';
import { sendPage } from '../layout.js';
import { operatorPages } from '../plugin.js';

const PAGE_SIZE = 50;
const PATH = '/operator/audit';

export const operatorAuditPages = operatorPages(['audit', 'tenants'], async (app, { audit, tenants }) => {
  app.get<{ Querystring: AuditFilterForm }>('/audit', async (request, reply) => {
    const form = request.query;
    const page = form.page && /^\d{1,9}$/.test(form.page) && Number(form.page) > 0 ? Number(form.page) : 1;
    const { query, issues } = auditQueryOf(form);
    let result: Awaited<ReturnType<typeof audit.list>> | undefined;
    let problems = issues;
    if (Object.keys(issues).length === 0) {
      try {
        const filters = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined));
        result = await audit.list(
          validated(ListOperatorAuditEventsQuery, { page, limit: PAGE_SIZE, ...filters }),
        );
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 422) throw error;
        problems = fieldIssues(error);
      }
    }
    const filtered = Object.values(query).some((value) => value !== undefined);
    const names = result ? await tenants.namesOf(result.data.map((entry) => entry.tenant_id)) : new Map();
    return sendPage(request, reply, {
      title: 'Audit log',
      section: 'audit',
      status: result ? 200 : 422,
      body: html`<p class="hint">Every change made on the platform — by API keys, agency console members, operator staff, the operator token and the command line — with who made it, when and from where; field names only, never their values. Kept 400 days.</p>
${auditFilters({ action: PATH, form, issues: problems, withTenant: true })}
${result && auditTable({ path: PATH, result, form, filtered, withTenant: { names } })}`,
    });
  });
});
