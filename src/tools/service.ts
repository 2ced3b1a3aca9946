/**
 * Tools (docs/tools.md): one contract for every voice engine. The engine's tool route (or the
 * simulator, in-process) asks `call` to run a tool of the call's agent version; we POST
 * `{ call_id, agent_id, tool, arguments }` to the tool's url, signed as Standard Webhooks with the
 * tenant's tools secret, through the SSRF guard and within the tool's timeout, and answer the
 * tool's JSON as the result, or an error text the agent can speak about. Every call is a timeline
 * entry of the call (name, duration, outcome): never the arguments.
 */

import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { type AgentTool, CONFIG_LIMITS } from '../agents/config.js';
import { insertTimelineEntries, TOOL_CALL_ENTRY } from '../calls/timeline-repository.js';
import { auditNothingChanged } from '../core/audit/context.js';
import { recordAudit } from '../core/audit/record.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { randomBase62 } from '../core/ids.js';
import { coalesce } from '../core/jobs/batching.js';
import type { HostResolver } from '../core/security/outbound-addresses.js';
import type { SecretBox } from '../core/security/secrets.js';
import { checkWebhookUrl } from '../events/ssrf.js';
import type { ToolRunner } from '../telephony/tool-paths.js';
import { postTool, type ToolPostOutcome } from './invoke.js';
import {
  findToolCallContexts,
  findToolsSecret,
  insertToolsSecret,
  lockToolsSecret,
  type ToolsSecretRow,
  updateToolsSecret,
} from './repository.js';
import type { ToolCallOutcome, ToolRequest, ToolsSecret } from './schemas.js';

/** How long the previous tools secret keeps signing beside the new one after a rotation. */
export const TOOLS_SECRET_OVERLAP_MS = 24 * 3_600_000;

/** Who asks for a tool: the call must be that engine's (the simulator's calls have no engine). */
export type ToolCaller = 'vapi' | 'retell' | 'simulated';

export interface ToolCall {
  caller: ToolCaller;
  tenantId: string;
  callId: string;
  name: string;
  /** As the engine sent them: an object, or a JSON string of one (Vapi's API document). */
  arguments: unknown;
}

/** `result`: the tool's JSON answer; `error`: a sentence the agent can say. */
export type ToolAnswer = { ok: true; result: unknown } | { ok: false; error: string };

/** What a caller may log about a tool call: never the arguments. */
export interface ToolCallSummary {
  name: string;
  callId: string;
  outcome: ToolCallOutcome;
  durationMs: number;
  statusCode: number | null;
}

export interface ToolServiceDeps {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  allowPrivate: boolean;
  resolve: HostResolver;
  /** Told of every tool call made (the route's log line). */
  onToolCall?: (summary: ToolCallSummary) => void;
}

export const toolsSecretContext = (tenantId: string, which: 'current' | 'previous') =>
  `tools_secrets.${which}:${tenantId}`;

function newToolsSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

const MAX_NAME_IN_TIMELINE = 64;

/** The arguments as an object: Vapi's API document sends a JSON string, its guides an object. */
export function argumentsOf(raw: unknown): Record<string, unknown> | undefined {
  let value = raw;
  if (raw === undefined || raw === null || raw === '') return {};
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * The tool of that name among a version's `tools`. Publishing checked the whole shape; what the
 * request needs is checked again here (the url's scheme and host are the SSRF guard's).
 */
function toolNamed(tools: unknown, name: string): AgentTool | undefined {
  if (!Array.isArray(tools)) return undefined;
  const found: unknown = tools.find(
    (tool) => typeof tool === 'object' && tool !== null && tool.name === name,
  );
  if (typeof found !== 'object' || found === null) return undefined;
  const tool = found as Partial<Record<keyof AgentTool, unknown>>;
  const seconds = tool.timeout_seconds;
  const { min, max } = CONFIG_LIMITS.toolTimeoutSeconds;
  if (typeof tool.url !== 'string' || typeof seconds !== 'number' || !(seconds >= min && seconds <= max))
    return undefined;
  return { ...(found as AgentTool), name, url: tool.url, timeout_seconds: seconds };
}

export function createToolService(deps: ToolServiceDeps) {
  const { db, clock, secrets } = deps;
  /** A turn's tool calls (the simulator's batch, concurrent engine requests) read and record together. */
  const readContext = coalesce((keys: { tenantId: string; callId: string }[]) =>
    findToolCallContexts(db, keys),
  );
  const recordToolCall = coalesce(async (entries: Parameters<typeof insertTimelineEntries>[1]) => {
    await insertTimelineEntries(db, entries);
    return entries.map(() => undefined);
  });

  function signers(row: ToolsSecretRow, now: Date): Webhook[] {
    const found = [
      new Webhook(secrets.open(row.secret_sealed, toolsSecretContext(row.tenant_id, 'current'))),
    ];
    if (
      row.previous_secret_sealed &&
      row.previous_secret_expires_at &&
      row.previous_secret_expires_at > now
    ) {
      const previous = secrets.open(
        row.previous_secret_sealed,
        toolsSecretContext(row.tenant_id, 'previous'),
      );
      found.push(new Webhook(previous));
    }
    return found;
  }

  /** The POST itself, once the call, the tool and the secret are known. */
  async function send(tool: AgentTool, row: ToolsSecretRow, body: string): Promise<ToolPostOutcome | string> {
    const checked = await checkWebhookUrl(tool.url, {
      allowPrivate: deps.allowPrivate,
      resolve: deps.resolve,
    });
    if (!checked.ok) return `url ${checked.issue}`;
    const id = `tc_${randomBase62(24)}`;
    // The signature's timestamp is the wall clock: receivers compare it with theirs.
    const sentAt = systemClock.now();
    const signature = signers(row, clock.now())
      .map((webhook) => webhook.sign(id, sentAt, body))
      .join(' ');
    return postTool({
      url: checked.url,
      addresses: checked.addresses,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'voiceplane-tools/1',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body,
      timeoutMs: tool.timeout_seconds * 1000,
    });
  }

  /** The answer for the engine and the outcome for the timeline, from what the endpoint did. */
  function answerOf(
    name: string,
    sent: ToolPostOutcome | string,
  ): ToolAnswer & { outcome: ToolCallOutcome; status: number | null } {
    const unavailable = `The tool ${name} is not available right now.`;
    if (typeof sent === 'string') return { ok: false, error: unavailable, outcome: 'refused', status: null };
    if (sent.kind === 'timed_out')
      return {
        ok: false,
        error: `The tool ${name} did not answer in time.`,
        outcome: 'timed_out',
        status: null,
      };
    if (sent.kind === 'unreachable')
      return { ok: false, error: `The tool ${name} could not be reached.`, outcome: 'failed', status: null };
    if (sent.kind === 'too_large')
      return {
        ok: false,
        error: `The tool ${name} answered too much.`,
        outcome: 'failed',
        status: sent.status,
      };
    if (sent.status < 200 || sent.status >= 300)
      return {
        ok: false,
        error: `The tool ${name} failed (HTTP ${sent.status}).`,
        outcome: 'failed',
        status: sent.status,
      };
    try {
      const result: unknown = sent.body.trim() === '' ? null : JSON.parse(sent.body);
      return { ok: true, result, outcome: 'succeeded', status: sent.status };
    } catch {
      return {
        ok: false,
        error: `The tool ${name} gave an answer that is not JSON.`,
        outcome: 'failed',
        status: sent.status,
      };
    }
  }

  /** The rotation; with `expected` (a rotated_at, or null for none), only while it still holds. */
  async function rotate(
    tenantId: string,
    expected: string | null | undefined,
  ): Promise<ToolsSecret | undefined> {
    const secret = newToolsSecret();
    const now = clock.now();
    const sealed = secrets.seal(secret, toolsSecretContext(tenantId, 'current'));
    const holds = (current: ToolsSecretRow | undefined) =>
      expected === undefined || (current ? current.rotated_at.toISOString() : null) === expected;
    // Two first rotations at once: one inserts, the other finds its row on the second pass and
    // rotates it, so neither answer is a secret that was never stored.
    for (let pass = 0; pass < 2; pass++) {
      const stored = await db.transaction().execute(async (tx) => {
        const current = await lockToolsSecret(tx, tenantId);
        if (!holds(current)) return 'changed' as const;
        const audited = () =>
          recordAudit(tx, {
            action: 'tools_secret.rotated',
            tenantId,
            objectType: 'tools_secret',
            objectId: tenantId,
            fields: ['secret'],
            at: now,
          });
        if (!current) {
          const row = { tenant_id: tenantId, secret_sealed: sealed, rotated_at: now };
          const inserted = await insertToolsSecret(tx, {
            ...row,
            previous_secret_sealed: null,
            previous_secret_expires_at: null,
          });
          if (!inserted) return undefined;
          await audited();
          return { secret, previous_valid_until: null };
        }
        const previous = secrets.open(current.secret_sealed, toolsSecretContext(tenantId, 'current'));
        const validUntil = new Date(now.getTime() + TOOLS_SECRET_OVERLAP_MS);
        await updateToolsSecret(tx, {
          tenant_id: tenantId,
          secret_sealed: sealed,
          previous_secret_sealed: secrets.seal(previous, toolsSecretContext(tenantId, 'previous')),
          previous_secret_expires_at: validUntil,
          rotated_at: now,
        });
        await audited();
        return { secret, previous_valid_until: validUntil.toISOString() };
      });
      if (stored === 'changed') {
        auditNothingChanged();
        return undefined;
      }
      if (stored) return stored;
    }
    return undefined;
  }

  const service = {
    /**
     * Creates the tenant's tools secret, or replaces it: the old one keeps signing beside the new
     * one for TOOLS_SECRET_OVERLAP_MS. The answer is the only time the secret is shown.
     */
    async rotateSecret(tenantId: string): Promise<ToolsSecret> {
      const rotated = await rotate(tenantId, undefined);
      if (!rotated) throw new Error('the tools secret was neither inserted nor found');
      return rotated;
    },

    /**
     * `rotateSecret`, only while the secret is still the one last rotated at `rotatedAt` (null:
     * none exists yet); undefined, changing nothing, once it was rotated since. A console form
     * sent twice rotates once, so the secret its first answer showed is not dropped unseen.
     */
    async rotateSecretIf(tenantId: string, rotatedAt: string | null): Promise<ToolsSecret | undefined> {
      return rotate(tenantId, rotatedAt);
    },

    /**
     * Whether the tenant has a tools secret, since when, and until when the previous one still
     * signs beside it (the console shows this, never a secret).
     */
    async secretStatus(tenantId: string): Promise<{
      exists: boolean;
      rotated_at: string | null;
      previous_valid_until: string | null;
    }> {
      const row = await findToolsSecret(db, tenantId);
      const until = row?.previous_secret_expires_at;
      return {
        exists: row !== undefined,
        rotated_at: row ? row.rotated_at.toISOString() : null,
        previous_valid_until: until && until > clock.now() ? until.toISOString() : null,
      };
    },

    /**
     * Runs one tool of the call's agent version. Never throws for the partner's endpoint: a
     * failure, a non-2xx, a timeout or a refused url is an error text. A call that is unknown, or
     * not this engine's, is an error text too, with no timeline entry (there is no call to write it to).
     */
    async call(request: ToolCall): Promise<ToolAnswer> {
      const started = performance.now();
      const call = await readContext({ tenantId: request.tenantId, callId: request.callId });
      const engineOfCall = call?.engine ?? 'simulated';
      if (!call || engineOfCall !== request.caller || call.agent_id === null || call.agent_version === null)
        return { ok: false, error: 'This call cannot use tools.' };
      const agentId = call.agent_id;
      const name = request.name.slice(0, MAX_NAME_IN_TIMELINE);
      const args = argumentsOf(request.arguments);
      const tool = toolNamed(call.tools, request.name);
      const row = tool && args ? (call.secret ?? undefined) : undefined;
      let answer: ToolAnswer & { outcome: ToolCallOutcome; status: number | null };
      if (!tool) {
        answer = { ok: false, error: `There is no tool named ${name}.`, outcome: 'refused', status: null };
      } else if (!args) {
        answer = {
          ok: false,
          error: `The arguments for ${name} are not a JSON object.`,
          outcome: 'refused',
          status: null,
        };
      } else if (!row) {
        answer = {
          ok: false,
          error: `The tool ${name} is not available right now.`,
          outcome: 'refused',
          status: null,
        };
      } else {
        const body: ToolRequest = {
          call_id: call.id,
          agent_id: agentId,
          tool: tool.name,
          arguments: args,
        };
        answer = answerOf(tool.name, await send(tool, row, JSON.stringify(body)));
      }
      const durationMs = Math.round(performance.now() - started);
      await recordToolCall({
        tenantId: call.tenant_id,
        callId: call.id,
        kind: TOOL_CALL_ENTRY,
        at: clock.now(),
        detail: { name, duration_ms: durationMs, outcome: answer.outcome, status_code: answer.status },
      });
      deps.onToolCall?.({
        name,
        callId: call.id,
        outcome: answer.outcome,
        durationMs,
        statusCode: answer.status,
      });
      return answer.ok ? { ok: true, result: answer.result } : { ok: false, error: answer.error };
    },

    /** `call` for the simulator's calls: what the composition root hands the simulated engine. */
    simulatedRunner(): ToolRunner {
      return (request) => service.call({ caller: 'simulated', ...request });
    },
  };
  return service;
}

export type ToolService = ReturnType<typeof createToolService>;
