/**
 * Inbound calls (docs/phone-numbers.md): who answers a call to one of a tenant's numbers. The
 * number's inbound agent answers with its published version and configuration, `{phone}` the
 * caller's number and every other placeholder empty, unless the call cannot be served: no inbound
 * agent, the agent deleted or unpublished, its owner blocked or out of credits, the tenant's wallet
 * exhausted, a concurrency cap reached, or outside the agent's calling hours. A declined call is
 * recorded as `failed` with `ended_reason` saying why (`call.failed`), billed nothing; the engine's
 * route declines it the engine's way. An answered call is recorded as inbound and then runs like an
 * outbound one: the engine's reports (or, for the simulator, the pipeline) move it on and bill it.
 *
 * Fast: one indexed read of the number with its agent, owner, wallet and cap; the published
 * version (cached: versions never change); one statement storing the call (under the cap locks
 * when a cap is set).
 */
import type { AgentSettings } from '../agents/settings.js';
import { nextOpening } from '../calls/calling-hours.js';
import { lockAndCountActive } from '../calls/dispatch-controls.js';
import { insertInboundCall, type NewInboundCall } from '../calls/inbound-repository.js';
import { renderInboundTemplate } from '../calls/template.js';
import { BoundedMap } from '../core/bounded-map.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import type {
  DialRequest,
  InboundAnswer,
  InboundCallRequest,
  InboundCalls,
  PublishedAgentVersion,
} from '../telephony/port.js';
import { findInboundTarget, type InboundTarget } from './repository.js';

/** What the caller hears when a call is declined and the agent has no voicemail message. */
export const DECLINED_MESSAGE = 'Sorry, we cannot take your call right now. Please try again later.';

/** Why a call was declined: its `ended_reason`, and its `failure_reason` in words. */
const REASONS = {
  'tenant-suspended': 'The platform suspended the agency’s account.',
  'no-inbound-agent': 'The number has no inbound agent.',
  'agent-unavailable': 'The number’s inbound agent was deleted, or its owner cannot take calls.',
  'agent-not-published': 'The number’s inbound agent has no published version.',
  'insufficient-credits': 'The agent’s owner has no credits left.',
  'tenant-balance-exhausted': 'The agency’s wholesale minutes are used up.',
  'concurrency-cap-reached': 'The agent or the agency is already on as many calls as its cap allows.',
  'outside-calling-hours': 'The call came outside the agent’s calling hours.',
} as const;
export type DeclineReason = keyof typeof REASONS;

/** The refusal a number's state earns before any cap is counted, if any. */
function refusalOf(target: InboundTarget, now: Date): DeclineReason | undefined {
  if (target.tenant_suspended) return 'tenant-suspended';
  if (target.inbound_agent_id === null) return 'no-inbound-agent';
  if (target.agent_id === null || target.owner_usable === false || target.user_id === null)
    return 'agent-unavailable';
  if (target.published_version === null) return 'agent-not-published';
  if ((target.credit_balance_minutes ?? 0) <= 0) return 'insufficient-credits';
  if (target.wallet_balance_minutes !== null && target.wallet_balance_minutes <= 0)
    return 'tenant-balance-exhausted';
  const hours = target.settings?.calling_hours;
  if (hours && nextOpening(now, hours).getTime() > now.getTime()) return 'outside-calling-hours';
  return undefined;
}

const VERSION_CACHE_SIZE = 1000;

export type InboundCallService = ReturnType<typeof createInboundCalls>;

export function createInboundCalls(deps: {
  db: Db;
  clock: Clock;
  /** The telephony engine (its name is shown in the calls' events). */
  telephony: { readonly name: string };
  /** The published versions, with their configuration (the agents service). */
  agents: {
    publishedVersion(
      tenantId: string,
      agentId: string,
      version: number,
    ): Promise<PublishedAgentVersion | undefined>;
  };
  /** Told after a call was queued for the pipeline (the simulator's inbound calls). */
  onQueued?: () => void;
}): InboundCalls & { declinedMessage(version: PublishedAgentVersion | undefined): string } {
  const { db, clock } = deps;
  const versions = new BoundedMap<string, PublishedAgentVersion>({ maxEntries: VERSION_CACHE_SIZE });

  async function versionOf(tenantId: string, agentId: string, version: number) {
    const key = `${tenantId}\u0000${agentId}\u0000${version}`;
    const cached = versions.get(key);
    if (cached) return cached;
    const found = await deps.agents.publishedVersion(tenantId, agentId, version);
    if (found) versions.set(key, found);
    return found;
  }

  /** The agent's voicemail message where it has one, else a short default. */
  function declinedMessage(version: PublishedAgentVersion | undefined): string {
    const message = version?.config.voicemail?.message?.trim();
    return message ? message : DECLINED_MESSAGE;
  }

  async function decline(
    target: InboundTarget,
    request: InboundCallRequest,
    reason: DeclineReason,
  ): Promise<InboundAnswer> {
    const version =
      target.agent_id && target.published_version !== null
        ? await versionOf(target.tenant_id, target.agent_id, target.published_version)
        : undefined;
    const now = clock.now();
    const callId = newId('call');
    await insertInboundCall(
      db,
      {
        id: callId,
        tenantId: target.tenant_id,
        agentId: target.agent_id,
        agentVersion: target.agent_id ? target.published_version : null,
        userId: target.agent_id ? target.user_id : null,
        from: request.from,
        to: target.phone_number,
        prompt: version ? renderInboundTemplate(version.prompt, request.from) : '',
        welcomeMessage: version ? renderInboundTemplate(version.welcomeMessage, request.from) : '',
        status: 'failed',
        createdAt: now,
        engine: deps.telephony.name === 'simulated' ? null : deps.telephony.name,
        engineCallId: request.engineCallId ?? null,
        endedReason: reason,
        failureReason: REASONS[reason],
      },
      deps.telephony.name,
    );
    return {
      kind: 'decline',
      callId,
      reason,
      message: renderInboundTemplate(declinedMessage(version), request.from),
    };
  }

  /** Whether a cap is full, counted under the caps' locks (the pipeline's order: agent, then tenant). */
  async function capFull(tx: Executor, target: InboundTarget): Promise<boolean> {
    const active = await lockAndCountActive(tx, {
      tenantId: target.tenant_id,
      agentId: target.agent_id ?? '',
    });
    return (
      (active.agentCap !== null && active.agentActive >= active.agentCap) ||
      (active.tenantCap !== null && active.tenantActive >= active.tenantCap)
    );
  }

  const capped = (target: InboundTarget) =>
    (target.settings as AgentSettings | null)?.max_concurrent_calls !== undefined ||
    target.tenant_cap !== null;

  async function answer(engine: string, request: InboundCallRequest): Promise<InboundAnswer> {
    const target = await findInboundTarget(db, engine, request.engineNumberId);
    if (!target) return { kind: 'decline', reason: 'unknown-number', message: DECLINED_MESSAGE };
    const now = clock.now();
    const refused = refusalOf(target, now);
    if (refused) return decline(target, request, refused);
    const agentId = target.agent_id as string;
    const agentVersion = target.published_version as number;
    const version = await versionOf(target.tenant_id, agentId, agentVersion);
    if (!version) return decline(target, request, 'agent-not-published');
    const callId = newId('call');
    const dial: DialRequest = {
      callId,
      attempt: 1,
      tenantId: target.tenant_id,
      agentId,
      agentVersion,
      from: request.from,
      to: target.phone_number,
      name: '',
      email: null,
      prompt: renderInboundTemplate(version.prompt, request.from),
      welcomeMessage: renderInboundTemplate(version.welcomeMessage, request.from),
      context: {},
    };
    if (request.mode === 'decide') {
      // The call is stored when the engine reports it started (`started`); only a full cap declines now.
      if (capped(target) && (await db.transaction().execute((tx) => capFull(tx, target)))) {
        return decline(target, request, 'concurrency-cap-reached');
      }
      return { kind: 'answer', callId: undefined, request: dial, version };
    }
    const call: NewInboundCall = {
      id: callId,
      tenantId: target.tenant_id,
      agentId,
      agentVersion,
      userId: target.user_id,
      from: request.from,
      to: target.phone_number,
      prompt: dial.prompt,
      welcomeMessage: dial.welcomeMessage,
      // The simulator's calls are played by the pipeline; a voice engine already holds the call.
      status: engine === 'simulated' ? 'queued' : 'dialing',
      createdAt: now,
      engine: engine === 'simulated' ? null : engine,
      engineCallId: request.engineCallId ?? null,
    };
    const stored = capped(target)
      ? await db
          .transaction()
          .execute(async (tx) =>
            (await capFull(tx, target)) ? 'full' : await insertInboundCall(tx, call, deps.telephony.name),
          )
      : await insertInboundCall(db, call, deps.telephony.name);
    if (stored === 'full') return decline(target, request, 'concurrency-cap-reached');
    if (!stored) return { kind: 'decline', reason: 'duplicate', message: DECLINED_MESSAGE };
    if (call.status === 'queued') deps.onQueued?.();
    return { kind: 'answer', callId, request: dial, version };
  }

  return {
    answer,
    declinedMessage,

    async started(engine, request) {
      const decided = await answer(engine, { ...request, mode: 'decide' });
      if (decided.kind !== 'answer') return undefined;
      const { request: dial } = decided;
      const stored = await insertInboundCall(
        db,
        {
          id: dial.callId,
          tenantId: dial.tenantId,
          agentId: dial.agentId,
          agentVersion: dial.agentVersion,
          userId: (await findInboundTarget(db, engine, request.engineNumberId))?.user_id ?? null,
          from: dial.from,
          to: dial.to,
          prompt: dial.prompt,
          welcomeMessage: dial.welcomeMessage,
          status: 'in_progress',
          createdAt: request.startedAt,
          engine,
          engineCallId: request.engineCallId,
        },
        deps.telephony.name,
      );
      return stored ? dial.callId : undefined;
    },
  };
}
