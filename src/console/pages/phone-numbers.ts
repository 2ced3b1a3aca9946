/**
 * Phone numbers in the console (docs/phone-numbers.md): the tenant's numbers, who answers each
 * (its inbound agent) and its label, with the same service and refusals as
 * PATCH /api/v1/phone-numbers/{phone_number}; the inbound calls per number, linked to the calls
 * list; and, with TELEPHONY=simulated, a button that rings the number through the simulator's
 * inbound path (a form sent twice rings once). services.phoneNumbers, services.inboundCalls.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { SimulateInboundCallBody, UpdatePhoneNumberBody } from '../../phone-numbers/schemas.js';
import { simulateInboundCall } from '../../phone-numbers/simulated-inbound.js';
import { dateTime, emptyState, field, inputField, select } from '../../web/components.js';
import { fieldIssues, formOf, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { newFormKey, oncePerFormKey } from '../../web/once.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

/** A tenant holds few numbers: one page of them is all of them. */
const LIST_LIMIT = 100;
const DEFAULT_CALLER = '+14155550123';

type NumberParams = { Params: { phone_number: string } };

interface DetailState {
  values?: { inbound_agent_id?: string; label?: string };
  issues?: Record<string, string>;
  refusal?: string;
  simulate?: { from?: string; issues: Record<string, string>; refusal?: string };
  status?: number;
}

const pathOf = (phoneNumber: string) => `/console/phone-numbers/${encodeURIComponent(phoneNumber)}`;
const callsLink = (phoneNumber: string) =>
  `/console/calls?direction=inbound&to=${encodeURIComponent(phoneNumber)}`;

export const phoneNumberPages = consolePages(
  ['phoneNumbers', 'inboundCalls', 'agents', 'idempotency', 'config'],
  async (app, { phoneNumbers, inboundCalls, agents, idempotency, config }) => {
    const simulated = config.telephony === 'simulated';

    /** The tenant's agents by id, for names and the picker (sorted by name). */
    const agentsOf = async (tenantId: string) =>
      (await agents.list(tenantId, { page: 1, limit: 100, sort_by: 'name', sort_order: 'asc' })).data;

    app.get('/phone-numbers', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const [result, agentList] = await Promise.all([
        phoneNumbers.listForTenant(tenantId, { page: 1, limit: LIST_LIMIT }),
        agentsOf(tenantId),
      ]);
      const names = new Map(agentList.map((agent) => [agent.id, agent.name]));
      const counts = await phoneNumbers.callsTo(
        tenantId,
        result.data.map((n) => n.phone_number),
      );
      const body =
        result.data.length === 0
          ? html`<div class="panel">${emptyState({
              title: 'No phone numbers yet',
              text: 'The platform’s operator imports the numbers your agency holds. Once one is here, choose the agent that answers it; your agents then also call from these numbers.',
            })}</div>`
          : html`<section class="panel panel-flush" aria-label="Phone numbers">
  <div class="table-wrap" role="region" aria-label="Phone numbers" tabindex="0"><table>
    <thead><tr><th scope="col">Number</th><th scope="col">Label</th><th scope="col">Answered by</th><th scope="col" class="numeric">Inbound calls</th><th scope="col">Since</th></tr></thead>
    <tbody>
    ${result.data.map((number) => {
      const calls = counts.get(number.phone_number) ?? 0;
      return html`<tr>
      <td class="phone"><a href="${pathOf(number.phone_number)}"><strong>${number.phone_number}</strong></a></td>
      <td>${number.label ?? html`<span class="subtle">—</span>`}</td>
      <td>${
        number.inbound_agent_id === null
          ? html`<span class="subtle">No one: calls are declined</span>`
          : html`<a href="/console/agents/${number.inbound_agent_id}">${names.get(number.inbound_agent_id) ?? number.inbound_agent_id}</a>`
      }</td>
      <td class="numeric"><a href="${callsLink(number.phone_number)}" aria-label="${calls} inbound ${calls === 1 ? 'call' : 'calls'} to ${number.phone_number}">${calls}</a></td>
      <td>${dateTime(number.created_at)}</td>
    </tr>`;
    })}
    </tbody>
  </table></div>
</section>`;
      return sendPage(request, reply, { title: 'Phone numbers', section: 'phone-numbers', body });
    });

    const detailPage = async (
      request: FastifyRequest<NumberParams>,
      reply: FastifyReply,
      state: DetailState = {},
    ) => {
      const tenantId = memberTenantId(request);
      const number = await phoneNumbers.getForTenant(tenantId, request.params.phone_number);
      const [agentList, counts] = await Promise.all([
        agentsOf(tenantId),
        phoneNumbers.callsTo(tenantId, [number.phone_number]),
      ]);
      const admin = can(request, 'admin');
      const csrf = admin ? csrfField(reply) : html``;
      const issues = state.issues ?? {};
      const selected = state.values?.inbound_agent_id ?? number.inbound_agent_id ?? '';
      const calls = counts.get(number.phone_number) ?? 0;
      const form: Html = admin
        ? html`<form method="post" action="${pathOf(number.phone_number)}" class="form-grid">
    ${csrf}
    ${field({
      id: 'inbound_agent_id',
      label: 'Answered by',
      hint: 'The agent’s published version answers; a call the agent cannot take is declined and shown as failed.',
      error: issues.inbound_agent_id,
      control: select({
        id: 'inbound_agent_id',
        choices: [
          { value: '', label: 'No one (decline calls)' },
          ...agentList.map((agent) => ({ value: agent.id, label: agent.name })),
        ],
        selected,
        error: issues.inbound_agent_id,
      }),
    })}
    ${inputField({
      id: 'label',
      label: 'Label (optional)',
      value: state.values?.label ?? number.label ?? '',
      placeholder: 'Front desk',
      hint: 'Your own name for the number. Leave it empty to clear it.',
      error: issues.label,
    })}
    <div class="form-actions field-wide"><button class="button button-primary" type="submit">Save</button></div>
  </form>`
        : html`<dl class="details">
    <dt>Answered by</dt><dd>${agentList.find((a) => a.id === number.inbound_agent_id)?.name ?? html`<span class="subtle">No one: calls are declined</span>`}</dd>
    <dt>Label</dt><dd>${number.label ?? html`<span class="subtle">—</span>`}</dd>
  </dl>`;
      const simulate = state.simulate ?? { issues: {} };
      const simulator =
        simulated &&
        admin &&
        html`<section class="panel" aria-labelledby="simulate-title">
  <h2 id="simulate-title">Simulate an inbound call</h2>
  <p class="subtle">The simulator rings this number as a caller would: the call is answered (or declined) exactly as a real one, and appears in your calls.</p>
  ${simulate.refusal && html`<div class="flash flash-error" role="alert">${simulate.refusal}</div>`}
  <form method="post" action="${pathOf(number.phone_number)}/simulate" class="inline-form">
    ${csrf}<input type="hidden" name="form_key" value="${newFormKey()}">
    ${inputField({ id: 'from', label: 'Caller’s number', type: 'tel', value: simulate.from ?? DEFAULT_CALLER, required: true, hint: 'E.164, with the country code.', error: simulate.issues.from })}
    <div class="inline-form-actions"><button class="button" type="submit">Simulate an inbound call</button></div>
  </form>
</section>`;
      const body = html`<section class="panel" aria-labelledby="answer-title">
  <h2 id="answer-title">Who answers</h2>
  ${state.refusal && html`<div class="flash flash-error" role="alert">${state.refusal}</div>`}
  ${form}
</section>
<section class="panel" aria-labelledby="calls-title">
  <h2 id="calls-title">Inbound calls</h2>
  <p>${calls === 1 ? '1 call' : `${calls} calls`} to this number. <a href="${callsLink(number.phone_number)}">See them in Calls</a></p>
</section>
${simulator}`;
      return sendPage(request, reply, {
        title: number.label ? `${number.phone_number} · ${number.label}` : number.phone_number,
        section: 'phone-numbers',
        parent: { href: '/console/phone-numbers', label: 'Phone numbers' },
        status: state.status ?? 200,
        body,
      });
    };

    app.get<NumberParams>('/phone-numbers/:phone_number', (request, reply) => detailPage(request, reply));

    app.post<NumberParams>('/phone-numbers/:phone_number', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const fields = formOf(request);
      const values = {
        inbound_agent_id: textField(fields, 'inbound_agent_id'),
        label: typeof fields.label === 'string' ? fields.label.trim() : undefined,
      };
      try {
        // Setting who answers is idempotent by nature: sending the form again sets the same.
        const input = validated(UpdatePhoneNumberBody, {
          inbound_agent_id: values.inbound_agent_id ?? null,
          ...(values.label === undefined ? {} : { label: values.label }),
        });
        const number = await phoneNumbers.updateForTenant(tenantId, request.params.phone_number, input);
        return redirectWithFlash(
          reply,
          pathOf(number.phone_number),
          number.inbound_agent_id === null
            ? `${number.phone_number} saved: its calls are declined until an agent answers it.`
            : `${number.phone_number} saved: its calls are answered by the agent you chose.`,
        );
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 422) throw error;
        return detailPage(request, reply, {
          values: { inbound_agent_id: values.inbound_agent_id ?? '', label: values.label },
          issues: fieldIssues(error),
          refusal: 'Nothing was saved: fix the fields marked below.',
          status: 422,
        });
      }
    });

    if (simulated) {
      app.post<NumberParams>('/phone-numbers/:phone_number/simulate', async (request, reply) => {
        const tenantId = memberTenantId(request);
        // 404 for a number that is not the tenant's, before anything rings.
        const number = await phoneNumbers.getForTenant(tenantId, request.params.phone_number);
        const fields = formOf(request);
        const from = textField(fields, 'from');
        try {
          const input = validated(SimulateInboundCallBody, { to: number.phone_number, from: from ?? '' });
          const path = `${pathOf(number.phone_number)}/simulate`;
          const callId = await oncePerFormKey(
            idempotency,
            { tenantId, formKey: textField(fields, 'form_key'), path, fields: input },
            async (claim) => {
              const id = await simulateInboundCall(phoneNumbers, inboundCalls, input, tenantId);
              if (claim)
                await idempotency.record(claim, { status: 201, body: { data: { id } }, headers: {} });
              return id;
            },
            (stored) => (stored as { data: { id: string } }).data.id,
          );
          return redirectWithFlash(
            reply,
            `/console/calls/${callId}`,
            `${number.phone_number} rang from ${input.from}.`,
          );
        } catch (error) {
          if (!(error instanceof ApiError) || error.status >= 500) throw error;
          const issues = error.status === 422 ? fieldIssues(error) : {};
          return detailPage(request, reply, {
            simulate: {
              from,
              issues,
              refusal:
                Object.keys(issues).length > 0
                  ? 'The number did not ring: fix the caller’s number.'
                  : error.message,
            },
            status: error.status,
          });
        }
      });
    }
  },
);
