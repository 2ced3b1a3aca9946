/**
 * The do-not-call list in the console (docs/console.md): the numbers no call may be placed to,
 * with the API's phone filter and pages; admins add and remove numbers. services.doNotCall.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { AddDoNotCallBody, ListDoNotCallQuery, PhoneNumberParam } from '../../do-not-call/schemas.js';
import { actionButton, dateTime, emptyState, inputField, pager } from '../../web/components.js';
import { fieldIssues, formOf, textField, validated } from '../../web/forms.js';
import { html } from '../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

const PAGE_SIZE = 25;

interface ListState {
  phone?: string;
  page?: number;
  values?: { phone_number?: string; reason?: string };
  issues?: Record<string, string>;
  status?: number;
}

export const doNotCallPages = consolePages(['doNotCall'], async (app, { doNotCall }) => {
  const listPage = async (request: FastifyRequest, reply: FastifyReply, state: ListState) => {
    const admin = can(request, 'admin');
    const phone = state.phone;
    let filterError: string | undefined;
    let result: Awaited<ReturnType<typeof doNotCall.list>> | undefined;
    try {
      const query = validated(ListDoNotCallQuery, {
        page: state.page ?? 1,
        limit: PAGE_SIZE,
        ...(phone ? { phone_number: phone } : {}),
      });
      result = await doNotCall.list(memberTenantId(request), query);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 422) throw error;
      filterError = fieldIssues(error).phone_number ?? error.message;
    }
    const csrf = admin ? csrfField(reply) : html``;
    const issues = state.issues ?? {};
    const addForm =
      admin &&
      html`<section class="panel" aria-labelledby="add-title">
  <h2 id="add-title">Add a number</h2>
  ${Object.keys(issues).length > 0 && html`<div class="flash flash-error" role="alert">The number was not added: fix the fields marked below.</div>`}
  <form method="post" action="/console/do-not-call" class="inline-form">
    ${csrf}
    ${inputField({
      id: 'phone_number',
      label: 'Phone number',
      type: 'tel',
      value: state.values?.phone_number,
      required: true,
      placeholder: '+14155550123',
      hint: 'E.164, with the country code.',
      error: issues.phone_number,
    })}
    ${inputField({
      id: 'reason',
      label: 'Reason (optional)',
      value: state.values?.reason,
      placeholder: 'Asked not to be called again',
      error: issues.reason,
    })}
    <div class="inline-form-actions"><button class="button button-primary" type="submit">Add to the list</button></div>
  </form>
</section>`;
    const filter = html`<form method="get" action="/console/do-not-call" class="filters dnc-search" role="search">
  ${inputField({ id: 'phone', label: 'Find a number', type: 'search', value: phone, placeholder: '+14155550123', error: filterError })}
  <button class="button" type="submit">Search</button>
  ${phone && html`<a class="button button-quiet" href="/console/do-not-call">Clear</a>`}
</form>`;
    let list = html``;
    if (result && result.pagination.total === 0) {
      list = html`<div class="panel">${
        phone
          ? emptyState({
              title: 'Not on the list',
              text: `${phone} is not on your do-not-call list: calls to it are allowed.`,
            })
          : emptyState({
              title: 'The list is empty',
              text: 'Numbers on this list are never called: every call to them is refused before it is placed. Add a number when someone asks not to be called again.',
            })
      }</div>`;
    } else if (result) {
      list = html`<section class="panel panel-flush" aria-label="Listed numbers">
  <div class="table-wrap" role="region" aria-label="Listed numbers" tabindex="0"><table>
    <thead><tr><th scope="col">Phone number</th><th scope="col">Reason</th><th scope="col">Added</th>${admin && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}</tr></thead>
    <tbody>
    ${result.data.map(
      (entry) => html`<tr>
      <td class="phone"><strong>${entry.phone_number}</strong></td>
      <td>${entry.reason ?? html`<span class="subtle">—</span>`}</td>
      <td>${dateTime(entry.created_at)}</td>
      ${
        admin &&
        html`<td class="actions">${actionButton({
          action: '/console/do-not-call/remove',
          label: 'Remove',
          csrf,
          tone: 'danger',
          small: true,
          fields: { phone_number: entry.phone_number },
          confirm: `Remove ${entry.phone_number} from the do-not-call list? Calls to it will be allowed again.`,
        })}</td>`
      }
    </tr>`,
    )}
    </tbody>
  </table></div>
  ${pager(result.pagination, '/console/do-not-call', { phone })}
</section>`;
    }
    return sendPage(request, reply, {
      title: 'Do-not-call list',
      section: 'do-not-call',
      status: state.status ?? (result ? 200 : 422),
      body: html`${addForm}${filter}${list}`,
    });
  };

  app.get<{ Querystring: { phone?: string; page?: string } }>('/do-not-call', async (request, reply) => {
    const page = request.query.page;
    return listPage(request, reply, {
      phone: request.query.phone?.trim() || undefined,
      page: page && /^\d{1,9}$/.test(page) && Number(page) > 0 ? Number(page) : 1,
    });
  });

  app.post('/do-not-call', async (request, reply) => {
    const fields = formOf(request);
    const values = { phone_number: textField(fields, 'phone_number'), reason: textField(fields, 'reason') };
    try {
      const input = validated(AddDoNotCallBody, {
        phone_number: values.phone_number ?? '',
        ...(values.reason ? { reason: values.reason } : {}),
      });
      const { entry, created } = await doNotCall.add(memberTenantId(request), input);
      return redirectWithFlash(
        reply,
        '/console/do-not-call',
        created
          ? `${entry.phone_number} added: calls to it will be refused.`
          : `${entry.phone_number} was already on the list; nothing changed.`,
      );
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 422) throw error;
      return listPage(request, reply, { values, issues: fieldIssues(error), status: 422 });
    }
  });

  app.post('/do-not-call/remove', async (request, reply) => {
    // The same check as the API's path parameter (the number as listed, at most 255 characters).
    const { phone_number } = validated(PhoneNumberParam, {
      phone_number: textField(formOf(request), 'phone_number') ?? '',
    });
    const entry = await doNotCall.remove(memberTenantId(request), phone_number);
    return redirectWithFlash(
      reply,
      '/console/do-not-call',
      `${entry.phone_number} removed: calls to it are allowed again.`,
    );
  });
});
