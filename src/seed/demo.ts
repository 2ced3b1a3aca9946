/**
 * The newcomer's demo tenant: created on first start with an empty embedded database, so both
 * surfaces can be tried within a minute.
 */

import type { AgentService } from '../agents/service.js';
import { issueApiKey, SCOPES } from '../api-keys/service.js';
import type { BrandingService } from '../branding/service.js';
import { seedDemoAgent } from '../calls/seed.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config/config.js';
import type { Database } from '../core/db/database.js';
import { newId, randomBase62 } from '../core/ids.js';
import { hashPassword } from '../core/security/passwords.js';
import { addCreditEntry } from '../credits/repository.js';
import type { MemberService } from '../members/service.js';
import type { PhoneNumberService } from '../phone-numbers/service.js';
import type { PlanService } from '../plans/service.js';
import type { TenantService } from '../tenants/service.js';
import { insertUser } from '../users/repository.js';

export interface DemoSeed {
  tenantId: string;
  apiKey: string;
  userId: string;
  userEmail: string;
  userPassword: string;
  /** The published demo agent; its webhook URL places calls. */
  agent: { id: string; webhookUrl: string };
  /** The demo number the agent answers (the simulator's engine only: a real engine holds its own). */
  phoneNumber: string | null;
  /** The console's owner, with the random password shown once. */
  owner: { email: string; password: string };
  /** Lines to print for the newcomer: the tenant's credentials and how to try them. */
  lines: string[];
}

/** What the demo seed uses (the entry points pass the whole services). */
export interface DemoSeedServices {
  readonly config: Config;
  readonly clock: Clock;
  readonly database: Database;
  readonly tenants: TenantService;
  readonly plans: PlanService;
  readonly agents: AgentService;
  readonly members: MemberService;
  readonly branding: BrandingService;
  readonly phoneNumbers: PhoneNumberService;
}

export async function isDatabaseEmpty(services: DemoSeedServices): Promise<boolean> {
  const row = await services.database.db
    .selectFrom('tenants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n) === 0;
}

export async function seedDemo(services: DemoSeedServices): Promise<DemoSeed> {
  const { clock, config } = services;
  const db = services.database.db;
  const tenant = await services.tenants.create({ name: 'Demo Agency' });
  const planInputs = [
    {
      name: 'Starter (card)',
      provider: 'processor',
      monthly_price: 2900,
      annual_price: 29000,
      included_minutes: 100,
      trial_period_days: 14,
    },
    {
      name: 'Pro (card)',
      provider: 'processor',
      monthly_price: 9900,
      annual_price: 99000,
      included_minutes: 500,
      trial_period_days: 0,
    },
    {
      name: 'Starter (invoice)',
      provider: 'agency',
      monthly_price: 2500,
      annual_price: 25000,
      included_minutes: 100,
      trial_period_days: 0,
    },
    {
      name: 'Pro (invoice)',
      provider: 'agency',
      monthly_price: 8900,
      annual_price: 89000,
      included_minutes: 500,
      trial_period_days: 0,
    },
  ] as const;
  for (const plan of planInputs) {
    await services.plans.create(tenant.id, { ...plan, currency: 'usd', overage_rate: 0.12, topup_rate: 0.1 });
  }
  const userPassword = 'demo-password';
  const userEmail = 'demo.user@example.com';
  const now = clock.now();
  const userId = newId('usr');
  const passwordHash = await hashPassword(userPassword, config.passwordHashMemoryKib);
  await db.transaction().execute(async (tx) => {
    await insertUser(tx, {
      id: userId,
      tenant_id: tenant.id,
      email: userEmail,
      name: 'Demo User',
      phone: '+14155550100',
      status: 'active',
      password_hash: passwordHash,
      created_at: now,
      updated_at: now,
    });
    await addCreditEntry(tx, { tenantId: tenant.id, userId, minutes: 60, reason: 'demo credits', at: now });
  });
  const { key } = await issueApiKey(db, clock, {
    tenantId: tenant.id,
    prefix: config.apiKeyPrefix,
    env: 'test',
    scopes: [...SCOPES],
    name: 'demo key',
    expiresAt: null,
  });
  const base = config.publicBaseUrl;
  const lines: string[] = [];
  lines.push(
    `  tenant:   ${tenant.id}`,
    `  API key:  ${key}   (every scope; shown once)`,
    `  user:     ${userEmail} / ${userPassword}`,
    'Try it:',
    `  curl -s ${base}/api/v1/plans -H 'Authorization: Bearer ${key}'`,
  );
  const demoAgent = await seedDemoAgent(services.agents, base, { tenantId: tenant.id, userId, apiKey: key });
  lines.push(...demoAgent.lines);
  const phoneNumber = await seedDemoNumber(services, tenant.id, demoAgent.agent.id, lines);
  // The console's owner gets a random password: the console may be reachable beyond this machine.
  const ownerPassword = randomBase62(16);
  const owner = await services.members.create(tenant.id, {
    email: 'owner@demo-agency.example',
    password: ownerPassword,
    name: 'Demo Owner',
    role: 'owner',
  });
  lines.push(
    'Agency console (the tenant dashboard):',
    `  ${base}/console   sign in as ${owner.email} / ${ownerPassword}   (shown once)`,
  );
  // The demo agency's clients see its brand, never the platform's (docs/white-label.md).
  const branding = await services.branding.update(tenant.id, {
    slug: 'demo',
    brand_name: 'Demo Voice Co.',
    primary_color: '#0f766e',
    support_email: 'help@demo-agency.example',
  });
  lines.push(
    'Client portal (what the agency’s clients see, in its brand):',
    `  ${branding.portal_url}   sign in as ${userEmail} / ${userPassword}`,
  );
  return {
    tenantId: tenant.id,
    apiKey: key,
    userId,
    userEmail,
    userPassword,
    agent: demoAgent.agent,
    phoneNumber,
    owner: { email: owner.email, password: ownerPassword },
    lines,
  };
}

/** The demo agent's number, imported for the demo tenant, answered by the agent (the simulator holds every number). */
const DEMO_NUMBER = '+14155550199';

async function seedDemoNumber(
  services: DemoSeedServices,
  tenantId: string,
  agentId: string,
  lines: string[],
): Promise<string | null> {
  // Vapi and Retell hold only the numbers bought there: the operator imports one of those.
  if (services.config.telephony !== 'simulated') return null;
  await services.phoneNumbers.import({ phone_number: DEMO_NUMBER, tenant_id: tenantId });
  await services.phoneNumbers.updateForTenant(tenantId, DEMO_NUMBER, {
    inbound_agent_id: agentId,
    label: 'Demo front desk',
  });
  lines.push(
    `Phone number ${DEMO_NUMBER} answers with the demo agent. Ring it from the console (Phone numbers,`,
    '  “Simulate an inbound call”), or with the operator API:',
    `  curl -s -X POST ${services.config.publicBaseUrl}/admin/v1/simulator/inbound-calls -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' -d '{"to":"${DEMO_NUMBER}","from":"+14155550123"}'`,
  );
  return DEMO_NUMBER;
}

/**
 * How to reach the operator API. Without ADMIN_TOKEN it stays off (an unset token means off): the server
 * never invents and stores an operator credential. Instead the banner gives the one command that
 * turns it on, with a freshly generated token, so the next start is the only restart needed.
 */
export function operatorLines(
  config: Pick<Config, 'adminToken' | 'databaseUrl' | 'publicBaseUrl'>,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  if (config.adminToken) {
    return [
      'Operator API (/admin/v1), with the ADMIN_TOKEN this server was started with:',
      `  curl -s ${config.publicBaseUrl}/admin/v1/tenants -H "Authorization: Bearer $ADMIN_TOKEN"`,
    ];
  }
  const kept = config.databaseUrl?.startsWith('memory:')
    ? 'The in-memory database starts empty again (and is seeded again) on that start.'
    : 'The demo data is kept and not seeded again.';
  // The restart keeps the PORT and DATA_DIR this server was started with (a line of its own, continued).
  const shell = (value: string) =>
    /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
  const same = ['PORT', 'DATA_DIR']
    .filter((name) => env[name])
    .map((name) => `${name}=${shell(env[name] ?? '')}`);
  return [
    'Operator API (/admin/v1) is off: ADMIN_TOKEN is not set. To turn it on, stop this server and',
    'start it again with a token, e.g. this one (generated now, stored nowhere):',
    ...(same.length ? [`  ${same.join(' ')} \\`] : []),
    `  ADMIN_TOKEN=${randomBase62(32)} npm start`,
    kept,
  ];
}
