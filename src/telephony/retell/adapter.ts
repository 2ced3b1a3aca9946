/**
 * The Retell voice engine (TELEPHONY=retell). Retell keeps agents of its own: each of our agents
 * is one Retell LLM (the prompt, welcome message, model and tools; our `{key}` placeholders as
 * Retell's `{{key}}` dynamic variables) and one Retell agent using it (voice, language, limits,
 * voicemail, analysis; its webhooks to us), and each published version of ours is one published
 * version of that Retell agent: the first is created, later ones update the same LLM and agent
 * in place, and publish-agent freezes each, so nothing done in Retell's dashboard changes a
 * version we froze. `retell_agent_versions` records the pair and the Retell agent version of each
 * of our versions. A call is then POST /v2/create-phone-call naming that agent version, with the
 * call's template values as dynamic variables and our call id and attempt in the metadata;
 * Retell's webhooks (routes.ts) report the rest. `findDial` finds the call of an attempt whose
 * answer was lost with POST /v2/list-calls, filtered by that metadata.
 */
import type { Clock } from '../../core/clock.js';
import type { RetellConfig } from '../../core/config/config.js';
import type { Db } from '../../core/db/database.js';
import { callValues } from '../call-values.js';
import type {
  CallProgress,
  DialRequest,
  DialResult,
  EngineReport,
  PublishedAgentVersion,
  TelephonyAdapter,
} from '../port.js';
import { TelephonyError } from '../port.js';
import { retellAgentFields, retellLlmBody } from './agent-body.js';
import {
  type CreateRetellAgentBody,
  createRetellClient,
  type ListCallsBody,
  RETELL_REQUEST_TIMEOUT_MS,
  type RetellCall,
} from './client.js';
import {
  ATTEMPT_METADATA_KEY,
  CALL_ID_METADATA_KEY,
  isCallOfAttempt,
  reportOfCall,
  TENANT_ID_METADATA_KEY,
} from './events.js';

export interface RetellAgentVersionsTable {
  agent_id: string;
  version: number;
  tenant_id: string;
  llm_id: string;
  llm_version: number | null;
  retell_agent_id: string;
  retell_agent_version: number;
  synced_at: Date;
}

declare module '../../core/db/database.js' {
  interface Tables {
    retell_agent_versions: RetellAgentVersionsTable;
  }
}

/**
 * A create-phone-call gives up after RETELL_REQUEST_TIMEOUT_MS; a request whose sender died may
 * still be taken by Retell a moment later. After three times the timeout, a call Retell does not
 * list was not created.
 */
export const RETELL_DIAL_SETTLE_MS = 3 * RETELL_REQUEST_TIMEOUT_MS;
/** list-calls' `limit` tops out at 1000. */
const CALL_LIST_PAGE = 1000;

/** Where Retell posts the webhooks of the agents we create (routes.ts). */
export const RETELL_WEBHOOK_PATH = '/engines/retell/webhooks';

/** Where Retell asks who answers an imported number's inbound calls (`call_inbound`, routes.ts). */
export const RETELL_INBOUND_PATH = '/engines/retell/inbound';

export interface RetellTelephonyOptions {
  config: RetellConfig;
  db: Db;
  clock: Clock;
  /** PUBLIC_BASE_URL: Retell must reach the webhook route there. */
  publicBaseUrl: string;
  /** The published version a call was placed with, to sync it when the publish job has not yet. */
  findAgentVersion(
    tenantId: string,
    agentId: string,
    version: number,
  ): Promise<PublishedAgentVersion | undefined>;
}

export { toRetellTemplate } from './agent-body.js';

/** The call's template values as Retell's dynamic variables (strings only). */
export const dynamicVariables = callValues;

type SyncedVersion = Pick<RetellAgentVersionsTable, 'retell_agent_id' | 'retell_agent_version'>;

export function createRetellTelephony(options: RetellTelephonyOptions): TelephonyAdapter {
  const { config, db, clock } = options;
  const client = createRetellClient(config);
  const webhookUrl = `${options.publicBaseUrl.replace(/\/+$/, '')}${RETELL_WEBHOOK_PATH}`;
  /** This process's syncs under way, so concurrent dials of a new version create one Retell agent. */
  const syncing = new Map<string, Promise<SyncedVersion>>();
  /** Per agent, the last sync started here: the versions of one agent are synced one at a time. */
  const agentQueue = new Map<string, Promise<unknown>>();

  const readSynced = (tenantId: string, agentId: string, version: number) =>
    db
      .selectFrom('retell_agent_versions')
      .select(['retell_agent_id', 'retell_agent_version'])
      .where('tenant_id', '=', tenantId)
      .where('agent_id', '=', agentId)
      .where('version', '=', version)
      .executeTakeFirst();

  /** The Retell LLM and agent of the agent's latest synced version, when one was synced. */
  const readPair = (tenantId: string, agentId: string) =>
    db
      .selectFrom('retell_agent_versions')
      .select(['llm_id', 'retell_agent_id', 'retell_agent_version'])
      .where('tenant_id', '=', tenantId)
      .where('agent_id', '=', agentId)
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();

  /**
   * Makes the version a published version of the agent's Retell agent, then records it. The
   * agent's first version creates the Retell LLM and agent; a later one updates them in place
   * (the LLM's latest version, the agent's draft). Publishing freezes the draft and starts the
   * next one, so the version recorded is the draft's number as update-agent (or create-agent)
   * answered it. No lock spans the HTTP calls: a process dying between the publish and the record
   * leaves a published version unused, and the next run publishes the next one. Two processes
   * syncing an agent's first version at once each create a pair; the first insert wins, and the
   * other pair stays at Retell unused (rare: a publish job racing a first dial).
   */
  async function publishAndRecord(published: PublishedAgentVersion): Promise<SyncedVersion> {
    const { tenantId, agentId, version } = published;
    const llmBody = retellLlmBody(published, options.publicBaseUrl);
    const fields = retellAgentFields(published, webhookUrl);
    const engine = (llm: {
      llm_id: string;
      version?: number | null;
    }): CreateRetellAgentBody['response_engine'] => ({
      type: 'retell-llm',
      llm_id: llm.llm_id,
      ...(typeof llm.version === 'number' ? { version: llm.version } : {}),
    });
    const pair = await readPair(tenantId, agentId);
    if (pair) await publishLegacyVersion(pair);
    const llm = pair
      ? await client.updateRetellLlm(pair.llm_id, llmBody)
      : await client.createRetellLlm(llmBody);
    const body = { response_engine: engine(llm), ...fields };
    const agent = pair
      ? await client.updateAgent(pair.retell_agent_id, body)
      : await client.createAgent(body);
    await client.publishAgent(agent.agent_id);
    const llmVersion = typeof llm.version === 'number' ? llm.version : null;
    await db
      .insertInto('retell_agent_versions')
      .values({
        agent_id: agentId,
        version,
        tenant_id: tenantId,
        llm_id: llm.llm_id,
        llm_version: llmVersion,
        retell_agent_id: agent.agent_id,
        retell_agent_version: agent.version,
        synced_at: clock.now(),
      })
      .onConflict((conflict) => conflict.columns(['agent_id', 'version']).doNothing())
      .execute();
    // The winner's row, whoever wrote it, so every dial of this version names the same agent.
    const stored = await readSynced(tenantId, agentId, version);
    if (!stored) {
      throw new TelephonyError(`Agent ${agentId} v${version} is synced to Retell for another tenant.`, false);
    }
    return stored;
  }

  /**
   * Versions synced before publishing existed left their Retell version a draft, which an update
   * would change under their calls: such a draft (the agent's latest version, unpublished, the one
   * recorded) is published as it stands first. Published versions were never drafts for long.
   */
  async function publishLegacyVersion(pair: { retell_agent_id: string; retell_agent_version: number }) {
    const latest = await client.getAgent(pair.retell_agent_id);
    if (latest.version === pair.retell_agent_version && latest.is_published !== true) {
      await client.publishAgent(pair.retell_agent_id);
    }
  }

  /** One sync at a time per agent in this process: an update and its publish are not interleaved. */
  function queuedForAgent(published: PublishedAgentVersion): Promise<SyncedVersion> {
    const before = agentQueue.get(published.agentId) ?? Promise.resolve();
    const run = before
      .catch(() => undefined)
      .then(
        async () =>
          (await readSynced(published.tenantId, published.agentId, published.version)) ??
          publishAndRecord(published),
      );
    agentQueue.set(published.agentId, run);
    void run
      .catch(() => undefined)
      .finally(() => {
        if (agentQueue.get(published.agentId) === run) agentQueue.delete(published.agentId);
      });
    return run;
  }

  async function ensureSynced(published: PublishedAgentVersion): Promise<SyncedVersion> {
    const { tenantId, agentId, version } = published;
    const known = await readSynced(tenantId, agentId, version);
    if (known) return known;
    const key = `${agentId}\u0000${version}`;
    const running = syncing.get(key);
    if (running) return running;
    const sync = queuedForAgent(published).finally(() => syncing.delete(key));
    syncing.set(key, sync);
    return sync;
  }

  /** Every call Retell holds with our call id in its metadata, oldest first, page by page. */
  async function callsOf(callId: string): Promise<RetellCall[]> {
    const body: ListCallsBody = {
      filter_criteria: { metadata: { [`metadata.${CALL_ID_METADATA_KEY}`]: [callId] } },
      sort_order: 'ascending',
      limit: CALL_LIST_PAGE,
    };
    const calls: RetellCall[] = [];
    for (;;) {
      const page = await client.listCalls(body);
      calls.push(...page);
      const last = page[page.length - 1]?.call_id;
      if (page.length < CALL_LIST_PAGE || typeof last !== 'string' || last === body.pagination_key)
        return calls;
      body.pagination_key = last;
    }
  }

  const inboundUrl = `${options.publicBaseUrl.replace(/\/+$/, '')}${RETELL_INBOUND_PATH}`;

  return {
    name: 'retell',
    dialSettleMs: RETELL_DIAL_SETTLE_MS,

    phoneNumbers: {
      async find(number: string) {
        const found = await client.getPhoneNumber(number);
        return found ? { id: found.phone_number, number: found.phone_number } : undefined;
      },
      async routeInbound(number) {
        await client.updatePhoneNumber(number.id, {
          inbound_webhook_url: inboundUrl,
          inbound_agent_id: null,
          inbound_agents: null,
        });
      },
    },

    async inboundAgentOf(published: PublishedAgentVersion) {
      const synced = await ensureSynced(published);
      return { agentId: synced.retell_agent_id, version: synced.retell_agent_version };
    },

    async syncAgentVersion(published: PublishedAgentVersion): Promise<void> {
      await ensureSynced(published);
    },

    async dial(request: DialRequest): Promise<DialResult> {
      const { tenantId, agentId, agentVersion } = request;
      let synced = await readSynced(tenantId, agentId, agentVersion);
      if (!synced) {
        const published = await options.findAgentVersion(tenantId, agentId, agentVersion);
        if (!published) {
          return {
            outcome: 'failed',
            reason: `Version ${agentVersion} of agent ${agentId} was not found, so it could not be synced to Retell.`,
          };
        }
        synced = await ensureSynced(published);
      }
      const call = await client.createPhoneCall({
        from_number: request.from,
        to_number: request.to,
        override_agent_id: synced.retell_agent_id,
        override_agent_version: synced.retell_agent_version,
        retell_llm_dynamic_variables: dynamicVariables(request),
        metadata: {
          [CALL_ID_METADATA_KEY]: request.callId,
          [TENANT_ID_METADATA_KEY]: tenantId,
          [ATTEMPT_METADATA_KEY]: String(request.attempt),
        },
      });
      return { outcome: 'placed', engineCallId: call.call_id };
    },

    async progress(): Promise<CallProgress> {
      return {
        state: 'failed',
        reason: 'Retell reports its calls by webhook; the progress of a placed call is never asked.',
      };
    },

    async findDial(request: DialRequest): Promise<DialResult | undefined> {
      const found = (await callsOf(request.callId)).find(
        (call) =>
          typeof call.call_id === 'string' &&
          call.call_id !== '' &&
          isCallOfAttempt(call, request.callId, request.attempt),
      );
      return found ? { outcome: 'placed', engineCallId: found.call_id as string } : undefined;
    },

    async lookup(engineCallId: string, callId: string): Promise<EngineReport | undefined> {
      const call = await client.getCall(engineCallId);
      return reportOfCall(call, clock.now(), callId);
    },
  };
}
