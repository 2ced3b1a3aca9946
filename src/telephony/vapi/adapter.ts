/**
 * The Vapi voice engine (TELEPHONY=vapi). Each dial is one `POST /call` from the agent's number (a
 * Vapi phone number the operator imported) to the callee, with a transient assistant speaking the
 * rendered prompt and welcome message as the call's agent version configures it (./assistant.ts:
 * voice, transcriber, model and tools, limits, voicemail, analysis), our call id and attempt in
 * its metadata. Vapi then reports
 * the call through its server messages to `/engines/vapi/server-messages` (./routes.ts); `lookup`
 * asks it directly, and `findDial` finds the call of an attempt whose answer was lost in Vapi's
 * list of the number's calls (`GET /call`, filtered by phone number and creation time).
 */
import { type Clock, systemClock } from '../../core/clock.js';
import type { VapiConfig } from '../../core/config/config.js';
import { describeProblems } from '../agent-config.js';
import { renderForCall } from '../call-values.js';
import {
  type CallProgress,
  type DialRequest,
  type DialResult,
  type EngineReport,
  type PublishedAgentVersion,
  type TelephonyAdapter,
  TelephonyError,
} from '../port.js';
import { type VapiAssistantConfig, vapiAssistantConfig, vapiConfigProblems } from './assistant.js';
import {
  createVapiClient,
  VAPI_REQUEST_TIMEOUT_MS,
  type VapiCallFilters,
  type VapiClient,
  type VapiCreateCallBody,
  type VapiPhoneNumber,
} from './client.js';
import {
  ATTEMPT_METADATA_KEY,
  CALL_ID_METADATA_KEY,
  isCallOfAttempt,
  reportFromCall,
  TENANT_ID_METADATA_KEY,
} from './messages.js';

export const VAPI_SERVER_MESSAGES_PATH = '/engines/vapi/server-messages';

/** The ended reason of a dial refused before Vapi was asked (ours, not Vapi's). */
export const PHONE_NUMBER_NOT_IMPORTED = 'phone-number-not-imported';

/** The model of the bare assistant (no findAgentVersion): OpenAI's gpt-4o, Vapi's own default. */
export const LEGACY_VAPI_MODEL = 'gpt-4o';

/** The ended reason of a dial whose agent version Vapi cannot run, or that was not found (ours). */
export const AGENT_VERSION_UNUSABLE = 'agent-version-unusable';

/** Only the messages the adapter reads: Vapi's default list would post every utterance too. */
const SERVER_MESSAGES = ['status-update', 'end-of-call-report'];

const PHONE_NUMBER_TTL_MS = 5 * 60_000;
/** A miss re-reads the list, unless it was read this recently (a burst of dials from one bad number). */
const MISS_REREAD_AFTER_MS = 10_000;
/** CreateCustomerDTO.name and CreateAssistantDTO.name allow 40 characters. */
const VAPI_NAME_LENGTH = 40;
/**
 * A `POST /call` gives up after VAPI_REQUEST_TIMEOUT_MS; a request whose sender died may still be
 * taken by Vapi a moment later. After three times the timeout, a call Vapi does not list was not
 * created.
 */
export const VAPI_DIAL_SETTLE_MS = 3 * VAPI_REQUEST_TIMEOUT_MS;
/** Vapi's clock and ours may differ: the list is read from this long before the request was sent. */
const CLOCK_SKEW_MS = 5 * 60_000;
/** GET /call's `limit` tops out at 1000. */
const CALL_LIST_PAGE = 1000;
/** Published versions never change: this many are kept in memory once read. */
const VERSION_CACHE_SIZE = 1000;

export interface VapiTelephonyOptions {
  config: VapiConfig;
  /** Where Vapi reaches this service (PUBLIC_BASE_URL); its server messages go below it. */
  publicBaseUrl: string;
  clock?: Clock;
  /** How long the list of Vapi's phone numbers is trusted (default 5 minutes). */
  phoneNumberTtlMs?: number;
  /**
   * The published version a call was placed with: its configuration makes the assistant. Without
   * it (tests of the callbacks alone) the assistant is the bare one: the prompt and welcome message
   * on LEGACY_VAPI_MODEL, Vapi's defaults for the rest.
   */
  findAgentVersion?(
    tenantId: string,
    agentId: string,
    version: number,
  ): Promise<PublishedAgentVersion | undefined>;
}

const truncate = (text: string, length: number) => Array.from(text).slice(0, length).join('');

/** Vonage keeps numbers without `+`: numbers are the same when their digits are (E.164). */
const digitsOf = (number: string) => number.replace(/\D/g, '');

/** Vapi's phone numbers by their digits, read through its API and kept for a while. */
function createPhoneNumberDirectory(client: VapiClient, clock: Clock, ttlMs: number) {
  let known:
    | { readAt: number; idByDigits: Map<string, string>; byId: Map<string, VapiPhoneNumber> }
    | undefined;
  let reading: Promise<NonNullable<typeof known>> | undefined;

  const read = () => {
    reading ??= client
      .listPhoneNumbers()
      .then((numbers) => {
        const idByDigits = new Map<string, string>();
        const byId = new Map<string, VapiPhoneNumber>();
        for (const entry of numbers) {
          const digits = entry.number ? digitsOf(entry.number) : '';
          byId.set(entry.id, entry);
          if (digits && !idByDigits.has(digits)) idByDigits.set(digits, entry.id);
        }
        known = { readAt: clock.now().getTime(), idByDigits, byId };
        return known;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };

  return {
    /** The id of the Vapi number with these digits, or undefined when none has them. */
    async idOf(number: string): Promise<string | undefined> {
      const digits = digitsOf(number);
      const age = known ? clock.now().getTime() - known.readAt : Number.POSITIVE_INFINITY;
      if (known && age < ttlMs) {
        const id = known.idByDigits.get(digits);
        if (id || age < MISS_REREAD_AFTER_MS) return id;
      }
      return (await read()).idByDigits.get(digits);
    },
    /** The number with these digits, read fresh from Vapi (an import: the operator just added it). */
    async fresh(number: string): Promise<VapiPhoneNumber | undefined> {
      const directory = await read();
      const id = directory.idByDigits.get(digitsOf(number));
      return id ? directory.byId.get(id) : undefined;
    },
    forget() {
      known = undefined;
    },
  };
}

/**
 * The transient assistant of a call (an outbound call's `POST /call`, an inbound call's answer to
 * `assistant-request`): the rendered prompt and welcome message with the version's configuration
 * (./assistant.ts), our call id, tenant and attempt in its metadata, and our server route.
 */
export function vapiTransientAssistant(
  settings: { publicBaseUrl: string; serverCredentialId: string | undefined },
  request: DialRequest,
  version: PublishedAgentVersion | undefined,
): VapiCreateCallBody['assistant'] {
  const system = [{ role: 'system' as const, content: request.prompt }];
  let configured: VapiAssistantConfig | undefined;
  if (version) {
    const { voicemail } = version.config;
    const voicemailText =
      voicemail?.action === 'leave_message' ? (voicemail.message ?? version.welcomeMessage) : '';
    configured = vapiAssistantConfig(version.config, {
      publicBaseUrl: settings.publicBaseUrl,
      credentialId: settings.serverCredentialId,
      ...(voicemailText ? { voicemailMessage: renderForCall(voicemailText, request) } : {}),
    });
  }
  const serverUrl = `${settings.publicBaseUrl.replace(/\/+$/, '')}${VAPI_SERVER_MESSAGES_PATH}`;
  return {
    name: truncate(`${request.agentId} v${request.agentVersion}`, VAPI_NAME_LENGTH),
    ...(request.welcomeMessage ? { firstMessage: request.welcomeMessage } : {}),
    ...configured,
    model: configured
      ? { ...configured.model, messages: system }
      : { provider: 'openai', model: LEGACY_VAPI_MODEL, messages: system },
    serverMessages: SERVER_MESSAGES,
    // Echoed in every server message (`assistant`, `call.assistant`): how a report finds its call.
    metadata: {
      [CALL_ID_METADATA_KEY]: request.callId,
      [TENANT_ID_METADATA_KEY]: request.tenantId,
      [ATTEMPT_METADATA_KEY]: String(request.attempt),
    },
    server: {
      url: serverUrl,
      credentialId: settings.serverCredentialId,
    },
  };
}

export function createVapiTelephony(options: VapiTelephonyOptions): TelephonyAdapter {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const client = createVapiClient({ config });
  const phoneNumbers = createPhoneNumberDirectory(
    client,
    clock,
    options.phoneNumberTtlMs ?? PHONE_NUMBER_TTL_MS,
  );
  const serverUrl = `${options.publicBaseUrl.replace(/\/+$/, '')}${VAPI_SERVER_MESSAGES_PATH}`;
  /** Published versions read, newest last (a Map keeps insertion order). */
  const versions = new Map<string, PublishedAgentVersion>();
  async function versionOf(request: DialRequest): Promise<PublishedAgentVersion | undefined> {
    const key = `${request.tenantId}\u0000${request.agentId}\u0000${request.agentVersion}`;
    const cached = versions.get(key);
    if (cached) return cached;
    const found = await options.findAgentVersion?.(request.tenantId, request.agentId, request.agentVersion);
    if (found) {
      versions.set(key, found);
      if (versions.size > VERSION_CACHE_SIZE) versions.delete(versions.keys().next().value as string);
    }
    return found;
  }

  const createCallBody = (
    request: DialRequest,
    phoneNumberId: string,
    version: PublishedAgentVersion | undefined,
  ): VapiCreateCallBody => {
    const name = truncate(request.name.trim(), VAPI_NAME_LENGTH);
    return {
      // Shown in Vapi's dashboard: the operator finds our call there by its id.
      name: request.callId,
      phoneNumberId,
      customer: { number: request.to, ...(name ? { name } : {}) },
      assistant: vapiTransientAssistant(
        { publicBaseUrl: options.publicBaseUrl, serverCredentialId: config.serverCredentialId },
        request,
        version,
      ),
    };
  };

  /**
   * Every call Vapi lists from the number (when it is still imported) created from `since` on,
   * page by page: a full page moves the window's bound past the calls it held (Vapi documents no
   * order, so the page's own order says which bound), until a page brings no call not seen yet.
   */
  async function listCallsSince(from: string, since: Date): Promise<Record<string, unknown>[]> {
    const phoneNumberId = await phoneNumbers.idOf(from);
    const filters: VapiCallFilters = {
      ...(phoneNumberId ? { phoneNumberId } : {}),
      createdAtGe: since.toISOString(),
      limit: CALL_LIST_PAGE,
    };
    const seen = new Map<string, Record<string, unknown>>();
    for (;;) {
      const page = await client.listCalls(filters);
      const fresh = page.filter((call) => typeof call.id === 'string' && !seen.has(call.id));
      for (const call of fresh) seen.set(call.id as string, call);
      if (page.length < CALL_LIST_PAGE || fresh.length === 0) return [...seen.values()];
      const first = String(page[0].createdAt ?? '');
      const last = String(page[page.length - 1].createdAt ?? '');
      if (!last) return [...seen.values()];
      if (first >= last) filters.createdAtLe = last;
      else filters.createdAtGe = last;
    }
  }

  return {
    name: 'vapi',
    dialSettleMs: VAPI_DIAL_SETTLE_MS,

    phoneNumbers: {
      async find(number: string) {
        const found = await phoneNumbers.fresh(number);
        return found ? { id: found.id, number } : undefined;
      },
      // Vapi asks the number's server URL for an assistant only when the number has none of its own.
      async routeInbound(number) {
        const found = await phoneNumbers.fresh(number.number);
        if (!found) throw new TelephonyError(`Vapi no longer holds ${number.number}.`, false);
        if (found.serverUrl === serverUrl && !found.answersItself) return;
        const clear = found.answersItself ? { assistantId: null, squadId: null, workflowId: null } : {};
        await client.updatePhoneNumber(found.id, {
          ...(found.provider ? { provider: found.provider } : {}),
          server: {
            url: serverUrl,
            ...(config.serverCredentialId ? { credentialId: config.serverCredentialId } : {}),
          },
          ...clear,
        });
        phoneNumbers.forget();
      },
    },

    async dial(request: DialRequest): Promise<DialResult> {
      const phoneNumberId = await phoneNumbers.idOf(request.from);
      if (!phoneNumberId) {
        return {
          outcome: 'failed',
          reason: `The agent's number ${request.from} is not imported into Vapi.`,
          endedReason: PHONE_NUMBER_NOT_IMPORTED,
        };
      }
      const version = await versionOf(request);
      const problems = version
        ? describeProblems(vapiConfigProblems(version.config))
        : options.findAgentVersion
          ? 'it was not found.'
          : '';
      if (problems) {
        return {
          outcome: 'failed',
          reason: `Version ${request.agentVersion} of agent ${request.agentId} cannot be run by Vapi: ${problems}`,
          endedReason: AGENT_VERSION_UNUSABLE,
        };
      }
      try {
        const call = await client.createCall(createCallBody(request, phoneNumberId, version));
        return { outcome: 'placed', engineCallId: call.id };
      } catch (error) {
        // Refused for good: perhaps the number was removed from Vapi since it was read.
        if (error instanceof TelephonyError && !error.transient) phoneNumbers.forget();
        throw error;
      }
    },

    async progress(): Promise<CallProgress> {
      return { state: 'failed', reason: 'Vapi reports its calls through server messages; it is not polled.' };
    },

    async findDial(request: DialRequest, sentAt: Date): Promise<DialResult | undefined> {
      const since = new Date(sentAt.getTime() - CLOCK_SKEW_MS);
      const ours = (await listCallsSince(request.from, since))
        .filter((call) => isCallOfAttempt(call, request.callId, request.attempt))
        .sort((a, b) => String(a.createdAt ?? '').localeCompare(String(b.createdAt ?? '')));
      const first = ours[0];
      return first ? { outcome: 'placed', engineCallId: first.id as string } : undefined;
    },

    async lookup(engineCallId: string, callId: string): Promise<EngineReport | undefined> {
      const call = await client.getCall(engineCallId);
      return reportFromCall(call, { engineCallId, callId }, clock.now());
    },
  };
}
