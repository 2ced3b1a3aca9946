/**
 * The agent page's test call (src/console/pages/agents.ts): the same request as POST /api/v1/calls,
 * its refusal shown on the agent's page beside the form's fields.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Agent } from '../../agents/schemas.js';
import { type CallDetail, CreateCallBody } from '../../calls/schemas.js';
import { ApiError } from '../../core/errors.js';
import { formOf, textField, validated } from '../../web/forms.js';
import { oncePerFormKey } from '../../web/once.js';
import { redirectWithFlash } from '../cookies.js';
import { memberTenantId } from '../layout.js';
import type { ConsoleServices } from '../plugin.js';
import { type DetailState, type Issues, issuesOf, type TestCallValues } from './agent-views.js';

type IdParams = { Params: { id: string } };
type DetailPage = (
  request: FastifyRequest,
  reply: FastifyReply,
  agent: Agent,
  state?: DetailState,
) => Promise<FastifyReply>;

export function testCallRoute(
  app: FastifyInstance,
  { agents, calls, idempotency }: Pick<ConsoleServices, 'agents' | 'calls' | 'idempotency'>,
  detailPage: DetailPage,
): void {
  app.post<IdParams>('/agents/:id/calls', async (request, reply) => {
    const tenantId = memberTenantId(request);
    const agent = await agents.get(tenantId, request.params.id);
    const fields = formOf(request);
    const values: TestCallValues = {
      phone: textField(fields, 'phone'),
      name: textField(fields, 'name'),
      context: textField(fields, 'context'),
    };
    const refuse = (issues: Issues, refusal: string | undefined, status: number) =>
      detailPage(request, reply, agent, { testCall: { values, issues, refusal }, status });
    let context: unknown;
    if (values.context !== undefined) {
      try {
        context = JSON.parse(values.context);
      } catch {
        return refuse(
          { context: 'must be a JSON object, e.g. {"product": "solar panels"}.' },
          undefined,
          422,
        );
      }
    }
    try {
      const body = validated(CreateCallBody, {
        agent_id: agent.id,
        phone: values.phone ?? '',
        ...(values.name !== undefined ? { name: values.name } : {}),
        ...(context !== undefined ? { context } : {}),
      });
      // The form's key is the Idempotency-Key: a resubmitted form answers the call it placed.
      const path = `/console/agents/${agent.id}/calls`;
      const call = await oncePerFormKey(
        idempotency,
        { tenantId, formKey: textField(fields, 'form_key'), path, fields: body },
        (claim) => calls.create(tenantId, body, claim && { claim, answer: (c) => queuedAnswer(c) }),
        (stored) => (stored as { data: CallDetail }).data,
      );
      return redirectWithFlash(reply, `/console/calls/${call.id}`, `Call to ${call.to} queued.`);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      const issues = issuesOf(error);
      const refusal =
        Object.keys(issues).length > 0
          ? 'The call was not placed: fix the fields marked below.'
          : error.message;
      return refuse(issues, refusal, error.status);
    }
  });
}

const queuedAnswer = (call: CallDetail) => ({ status: 202, body: { data: call }, headers: {} });
