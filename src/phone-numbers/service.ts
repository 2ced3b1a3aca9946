/**
 * Phone numbers (docs/phone-numbers.md): numbers the voice engine holds, imported by the operator
 * and assigned to one tenant each. The tenant names the agent that answers each number and gives it
 * a label; once a tenant holds numbers, its agents call from one of them (the caller-ID rule,
 * `callerIdIssue`, which the agents service asks).
 */
import { findAgent } from '../agents/repository.js';
import { type AuditChange, recordAudit, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { ApiError, type FieldIssue, notFound, validationFailed } from '../core/errors.js';
import type { EnginePhoneNumbers } from '../telephony/port.js';
import { TelephonyError } from '../telephony/port.js';
import { findTenant } from '../tenants/repository.js';
import {
  callerIdStanding,
  countCallsTo,
  countPhoneNumbers,
  deletePhoneNumber,
  findPhoneNumber,
  insertPhoneNumber,
  listPhoneNumbers,
  type PhoneNumberFilter,
  updatePhoneNumber,
} from './repository.js';
import type {
  ImportPhoneNumberBody,
  ListOperatorPhoneNumbersQuery,
  ListPhoneNumbersQuery,
  OperatorPhoneNumber,
  PhoneNumber,
  ReassignPhoneNumberBody,
  UpdatePhoneNumberBody,
} from './schemas.js';
import { toOperatorPhoneNumber, toPhoneNumber } from './serializers.js';

const missing = () => notFound('Phone number');

/** An engine that cannot be asked is the platform's trouble, not the request's: 503, retry later. */
function engineUnavailable(error: unknown): never {
  if (error instanceof TelephonyError) {
    throw new ApiError(
      'service_unavailable',
      `The voice engine could not be asked: ${error.message}`,
      undefined,
      {
        headers: { 'retry-after': '5' },
      },
    );
  }
  throw error;
}

export function createPhoneNumberService(deps: {
  db: Db;
  clock: Clock;
  /** The configured engine: its name, and its numbers (absent: it holds none). */
  telephony: { readonly name: string; readonly phoneNumbers?: EnginePhoneNumbers };
}) {
  const { db, clock } = deps;
  const engineName = deps.telephony.name;
  const enginePhoneNumbers = deps.telephony.phoneNumbers;

  async function checkedAgent(executor: Executor, tenantId: string, agentId: string | null) {
    if (agentId === null) return;
    const agent = await findAgent(executor, tenantId, agentId);
    if (!agent) {
      throw validationFailed([{ field: 'inbound_agent_id', issue: 'must be an agent of your tenant.' }]);
    }
  }

  return {
    /**
     * The caller-ID rule: once the tenant holds numbers, an agent's `phone_number` must be one of
     * them. Undefined when `phoneNumber` is allowed.
     */
    async callerIdIssue(tenantId: string, phoneNumber: string): Promise<FieldIssue | undefined> {
      const standing = await callerIdStanding(db, tenantId, phoneNumber);
      if (!standing.holdsNumbers || standing.holdsThis) return undefined;
      return { field: 'phone_number', issue: 'must be one of your tenant’s phone numbers.' };
    },

    /**
     * Imports a number the engine holds for a tenant, and points its inbound calls at this service.
     * 422 when the engine does not hold it or the tenant does not exist; 409 when already imported.
     */
    async import(input: ImportPhoneNumberBody): Promise<OperatorPhoneNumber> {
      const issues: FieldIssue[] = [];
      if (!(await findTenant(db, input.tenant_id)))
        issues.push({ field: 'tenant_id', issue: 'no such tenant.' });
      const held = await enginePhoneNumbers?.find(input.phone_number).catch(engineUnavailable);
      if (!held) {
        issues.push({
          field: 'phone_number',
          issue: `the voice engine (${engineName}) holds no such number.`,
        });
      }
      if (issues.length > 0 || !held) throw validationFailed(issues);
      const existing = await findPhoneNumber(db, input.phone_number);
      if (existing) throw new ApiError('conflict', 'The number is already imported; reassign it with PATCH.');
      await enginePhoneNumbers?.routeInbound(held).catch(engineUnavailable);
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) =>
          insertPhoneNumber(executor, {
            phone_number: input.phone_number,
            tenant_id: input.tenant_id,
            engine: engineName,
            engine_number_id: held.id,
            inbound_agent_id: null,
            label: null,
            created_at: now,
            updated_at: now,
          }),
        (inserted) =>
          inserted &&
          numberChange(
            'phone_number.imported',
            inserted.tenant_id,
            inserted.phone_number,
            Object.keys(input),
            now,
          ),
      );
      if (!row) throw new ApiError('conflict', 'The number is already imported; reassign it with PATCH.');
      return toOperatorPhoneNumber(row);
    },

    async list(query: ListOperatorPhoneNumbersQuery) {
      const filter: PhoneNumberFilter = {
        tenantId: query.tenant_id,
        inboundAgentId: query.inbound_agent_id,
        engine: query.engine,
      };
      return listPage(
        query,
        (limit, offset) => listPhoneNumbers(db, filter, limit, offset),
        () => countPhoneNumbers(db, filter),
        toOperatorPhoneNumber,
      );
    },

    async get(phoneNumber: string): Promise<OperatorPhoneNumber> {
      const row = await findPhoneNumber(db, phoneNumber);
      if (!row) throw missing();
      return toOperatorPhoneNumber(row);
    },

    /** Moves the number to another tenant; its inbound agent and label were the old tenant's. */
    async reassign(phoneNumber: string, input: ReassignPhoneNumberBody): Promise<OperatorPhoneNumber> {
      if (!(await findTenant(db, input.tenant_id))) {
        throw validationFailed([{ field: 'tenant_id', issue: 'no such tenant.' }]);
      }
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) =>
          updatePhoneNumber(executor, phoneNumber, {
            tenant_id: input.tenant_id,
            inbound_agent_id: null,
            label: null,
            updated_at: now,
          }),
        (updated) =>
          updated &&
          numberChange('phone_number.reassigned', updated.tenant_id, phoneNumber, ['tenant_id'], now),
      );
      if (!row) throw missing();
      return toOperatorPhoneNumber(row);
    },

    /** Releases the number: no tenant holds it any more (the engine keeps it; calls keep their numbers). */
    async release(phoneNumber: string): Promise<OperatorPhoneNumber> {
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) => deletePhoneNumber(executor, phoneNumber),
        (deleted) =>
          deleted && numberChange('phone_number.released', deleted.tenant_id, phoneNumber, [], now),
      );
      if (!row) throw missing();
      return toOperatorPhoneNumber(row);
    },

    async listForTenant(tenantId: string, query: ListPhoneNumbersQuery) {
      const filter: PhoneNumberFilter = { tenantId, inboundAgentId: query.inbound_agent_id };
      return listPage(
        query,
        (limit, offset) => listPhoneNumbers(db, filter, limit, offset),
        () => countPhoneNumbers(db, filter),
        toPhoneNumber,
      );
    },

    async getForTenant(tenantId: string, phoneNumber: string): Promise<PhoneNumber> {
      const row = await findPhoneNumber(db, phoneNumber, tenantId);
      if (!row) throw missing();
      return toPhoneNumber(row);
    },

    /** Names the agent that answers the number (null: its calls are declined) and its label. */
    async updateForTenant(
      tenantId: string,
      phoneNumber: string,
      input: UpdatePhoneNumberBody,
    ): Promise<PhoneNumber> {
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        if (!(await findPhoneNumber(tx, phoneNumber, tenantId))) throw missing();
        await checkedAgent(tx, tenantId, input.inbound_agent_id);
        const label =
          input.label === undefined ? {} : { label: input.label.trim() === '' ? null : input.label };
        const row = await updatePhoneNumber(
          tx,
          phoneNumber,
          { inbound_agent_id: input.inbound_agent_id, ...label, updated_at: now },
          tenantId,
        );
        if (!row) throw missing();
        await recordAudit(
          tx,
          numberChange('phone_number.updated', tenantId, phoneNumber, Object.keys(input), now),
        );
        return toPhoneNumber(row);
      });
    },

    /** The console: inbound calls per number. */
    callsTo: (tenantId: string, phoneNumbers: string[]) => countCallsTo(db, tenantId, phoneNumbers),
  };
}

export type PhoneNumberService = ReturnType<typeof createPhoneNumberService>;

function numberChange(
  action: string,
  tenantId: string | null,
  phoneNumber: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId, objectType: 'phone_number', objectId: phoneNumber, fields, at };
}
