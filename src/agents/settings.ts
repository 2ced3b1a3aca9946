/**
 * Call controls, kept per agent in `agents.settings` (platform contract §2): they apply to calls
 * placed after a change, whatever version is published. Every field is optional; absent means
 * no limit, no window, a single attempt.
 */
import { type Static, Type } from '@sinclair/typebox';

const Clock = Type.String({
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  description: '24-hour local time, `HH:MM`.',
  examples: ['09:00'],
});

export const CallingHours = Type.Object(
  {
    timezone: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'IANA time zone name, e.g. `America/New_York`.',
      examples: ['America/New_York'],
    }),
    days: Type.Array(Type.Integer({ minimum: 1, maximum: 7, examples: [1] }), {
      minItems: 1,
      maxItems: 7,
      uniqueItems: true,
      description: 'ISO weekdays the window opens on: 1 = Monday … 7 = Sunday.',
      examples: [[1, 2, 3, 4, 5]],
    }),
    start: Clock,
    end: {
      ...Clock,
      description: 'Closing time; before `start`, the window crosses midnight (its day is the day it opens).',
      examples: ['17:30'],
    },
  },
  {
    additionalProperties: false,
    title: 'CallingHours',
    description:
      'When calls may start, in the zone’s local time; `start` equal to `end` is refused (an empty or ambiguous window).',
  },
);
export type CallingHours = Static<typeof CallingHours>;

export const RetryPolicy = Type.Object(
  {
    max_attempts: Type.Integer({
      minimum: 1,
      maximum: 5,
      description: 'Dial attempts in all, the first included.',
      examples: [3],
    }),
    delay_minutes: Type.Integer({
      minimum: 1,
      maximum: 1440,
      description: 'Wait before the next attempt.',
      examples: [30],
    }),
  },
  { additionalProperties: false, title: 'RetryPolicy' },
);
export type RetryPolicy = Static<typeof RetryPolicy>;

export const AgentSettings = Type.Object(
  {
    max_concurrent_calls: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000,
        description: 'Calls of this agent dialling or in progress at once; more wait queued.',
        examples: [2],
      }),
    ),
    calling_hours: Type.Optional(CallingHours),
    retry: Type.Optional(RetryPolicy),
  },
  {
    additionalProperties: false,
    title: 'AgentSettings',
    description:
      'Call controls; every key optional. Unknown keys are refused. On PATCH the object replaces the whole settings; `{}` clears them.',
  },
);
export type AgentSettings = Static<typeof AgentSettings>;

/** True when `name` is a time zone this runtime knows (Intl's IANA database). */
export function isKnownTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
