/** Shapes of the per-tenant partner rate limit (operator API). */
import { type Static, Type } from '@sinclair/typebox';

export const TenantRateLimit = Type.Object(
  {
    requests_per_second: Type.Integer({
      minimum: 1,
      maximum: 100_000,
      description: 'Steady rate of each API key of the tenant (token bucket refill).',
    }),
    burst: Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description: 'Requests each key may send at once.',
    }),
  },
  {
    additionalProperties: false,
    description: 'Partner API limit per API key of the tenant; default 100 requests/s with bursts of 200.',
  },
);
export type TenantRateLimit = Static<typeof TenantRateLimit>;
