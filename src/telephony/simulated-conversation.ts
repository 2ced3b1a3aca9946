/**
 * The simulator's faithful demo (docs/engines.md, "The simulator"): the short conversation it
 * scripts for an answered call from the rendered welcome message and prompt, the path the
 * callee's number picks (a human, a voicemail, a transfer), the analysis it fills with values of
 * the configured types, and the small recording it serves (a WAV of tones and silence, one tone
 * per turn, generated here: no audio file ships with the service). Pure functions.
 */
import type { AgentConfig } from './agent-config.js';
import type { AnsweredBy, EngineAnalysis } from './outcomes.js';
import type { DialRequest } from './port.js';

/** The path a number takes (docs/engines.md): by the callee number's last four digits. */
export type SimulatedPath = 'no_answer' | 'failed' | 'voicemail' | 'transfer' | 'human';

export function simulatedPath(to: string): SimulatedPath {
  if (to.endsWith('0000')) return 'no_answer';
  if (to.endsWith('9999')) return 'failed';
  if (to.endsWith('8888')) return 'voicemail';
  if (to.endsWith('7777')) return 'transfer';
  return 'human';
}

/** The simulator's own words for how a call ended (ended_reason). */
export const SIMULATED_REASONS = { voicemail: 'voicemail', transferred: 'transferred' } as const;

export interface SimulatedTurn {
  speaker: 'agent' | 'callee';
  text: string;
}

/** What the simulator scripts for an answered attempt, kept with its record of the dial. */
export interface SimulatedConversation {
  turns: SimulatedTurn[];
  answeredBy: Exclude<AnsweredBy, 'unknown'>;
  endedReason?: string;
  transferredTo?: string;
  analysis: EngineAnalysis;
  /** The version's tools, each called once during the call (name and parameters' schema). */
  tools?: { name: string; parameters: unknown }[];
  /** Set once the tools were called (the claim that makes it once). */
  toolsCalled?: boolean;
}

/** The configuration parts the script uses; a version published before configurations has none. */
export type ScriptConfig = Pick<Partial<AgentConfig>, 'voicemail' | 'transfer' | 'analysis' | 'tools'>;

const PLACEHOLDER = /\{(\w+)\}/g;

/** `{key}` placeholders filled like the prompt's, from the call's values. */
function render(template: string, request: DialRequest): string {
  const values: Record<string, unknown> = { ...request.context, name: request.name, phone: request.to };
  if (request.email) values.email = request.email;
  return template.replace(PLACEHOLDER, (placeholder, key: string) => {
    const value = values[key];
    if (value === null || value === undefined) return placeholder;
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}

/** The prompt's first sentence, short enough to say: what the agent calls about. */
function topicOf(prompt: string): string {
  const first = prompt.trim().split(/(?<=[.!?])\s+/)[0] ?? '';
  const topic = first.length > 160 ? `${first.slice(0, 157)}…` : first;
  return topic === '' ? 'I am calling to follow up with you.' : topic;
}

/** A value of the field's type: the first allowed value, a number, true, or a short text. */
function sampleValue(field: NonNullable<ScriptConfig['analysis']>['data'][number]): unknown {
  switch (field.type) {
    case 'enum':
      return field.values?.[0] ?? null;
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'string':
      return `Simulated ${field.name.replace(/_/g, ' ')}`;
  }
}

/**
 * The conversation of an answered call, or undefined when voicemail answers and the agent's
 * setting hangs up (the call then ends `no_answer`, as an engine's would).
 */
export function scriptConversation(
  request: DialRequest,
  config: ScriptConfig,
  path: 'voicemail' | 'transfer' | 'human',
): SimulatedConversation | undefined {
  const who = request.name.trim() === '' ? 'there' : request.name.trim();
  const fields = config.analysis?.data ?? [];
  const wantsSummary = config.analysis?.summary ?? true;
  if (path === 'voicemail') {
    if (config.voicemail?.action !== 'leave_message') return undefined;
    const message = render(config.voicemail.message ?? request.welcomeMessage, request);
    return {
      turns: [
        { speaker: 'callee', text: 'You have reached voicemail. Please leave a message after the tone.' },
        { speaker: 'agent', text: message },
      ],
      answeredBy: 'voicemail',
      endedReason: SIMULATED_REASONS.voicemail,
      analysis: {
        summary: wantsSummary ? `Voicemail answered; the agent left a message for ${who}.` : null,
        successful: false,
        data: Object.fromEntries(fields.map((field) => [field.name, null])),
      },
    };
  }
  const target = path === 'transfer' ? config.transfer?.[0] : undefined;
  const turns: SimulatedTurn[] = [
    { speaker: 'agent', text: request.welcomeMessage.trim() || `Hello ${who}!` },
    { speaker: 'callee', text: `Hi, yes, this is ${who}. What is this about?` },
    { speaker: 'agent', text: topicOf(request.prompt) },
    {
      speaker: 'callee',
      text: target ? 'Could I speak to a person, please?' : 'That sounds good, thank you.',
    },
    target
      ? { speaker: 'agent', text: `Of course, I am transferring you now (${target.description}).` }
      : { speaker: 'agent', text: `Thank you for your time, ${who}. Goodbye!` },
  ];
  if (!target) turns.push({ speaker: 'callee', text: 'Goodbye!' });
  const conversation: SimulatedConversation = {
    turns,
    answeredBy: 'human',
    analysis: {
      summary: wantsSummary
        ? `The agent spoke with ${who} about: ${topicOf(request.prompt)}${target ? ' The call was transferred.' : ''}`
        : null,
      successful: config.analysis?.success_criteria ? true : null,
      data: Object.fromEntries(fields.map((field) => [field.name, sampleValue(field)])),
    },
  };
  const tools = config.tools ?? [];
  if (tools.length > 0) conversation.tools = tools.map(({ name, parameters }) => ({ name, parameters }));
  if (target) {
    conversation.endedReason = SIMULATED_REASONS.transferred;
    conversation.transferredTo = target.phone_number;
  }
  return conversation;
}

/** The transcript as engines give it: one line per turn, `Agent:` or `Customer:`. */
export function transcriptOf(conversation: SimulatedConversation): string {
  return conversation.turns
    .map((turn) => `${turn.speaker === 'agent' ? 'Agent' : 'Customer'}: ${turn.text}`)
    .join('\n');
}

const SAMPLE_RATE = 8000;
const TONE_SECONDS = 0.6;
const GAP_SECONDS = 0.25;
const MAX_TURNS = 12;

/**
 * A playable recording of the conversation: 8 kHz 8-bit mono PCM WAV, a tone per turn (the agent
 * higher, the callee lower), silence between. A few kilobytes per turn.
 */
export function recordingOf(turns: readonly Pick<SimulatedTurn, 'speaker'>[]): Buffer {
  const toneSamples = Math.round(SAMPLE_RATE * TONE_SECONDS);
  const gapSamples = Math.round(SAMPLE_RATE * GAP_SECONDS);
  const spoken = turns.slice(0, MAX_TURNS);
  const dataLength = Math.max(1, spoken.length) * (toneSamples + gapSamples);
  const wav = Buffer.alloc(44 + dataLength, 128);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + dataLength, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(SAMPLE_RATE, 24);
  wav.writeUInt32LE(SAMPLE_RATE, 28); // bytes per second: one byte per sample
  wav.writeUInt16LE(1, 32);
  wav.writeUInt16LE(8, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataLength, 40);
  spoken.forEach((turn, index) => {
    const frequency = turn.speaker === 'agent' ? 440 : 330;
    const start = 44 + index * (toneSamples + gapSamples);
    for (let i = 0; i < toneSamples; i++) {
      const fade = Math.min(1, i / 200, (toneSamples - i) / 200);
      wav[start + i] = Math.round(128 + 60 * fade * Math.sin((2 * Math.PI * frequency * i) / SAMPLE_RATE));
    }
  });
  return wav;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A value valid for a JSON Schema, as simply as the schema allows: its `const`, `enum`'s first
 * value, its `default`, `examples`' first, else by `type` (an object fills every property).
 */
export function sampleFor(schema: unknown, depth = 0): unknown {
  if (!isRecord(schema) || depth > 8) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.format === 'date') return '2030-01-15';
      if (schema.format === 'date-time') return '2030-01-15T10:00:00Z';
      if (schema.format === 'email') return 'ada@example.com';
      const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
      return 'sample'.padEnd(min, 'x');
    }
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 1;
    case 'boolean':
      return true;
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: min }, () => sampleFor(schema.items, depth + 1));
    }
    case 'null':
      return null;
    default: {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      return Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, sampleFor(property, depth + 1)]),
      );
    }
  }
}
