/**
 * `voiceplane owners create` and `api-keys create`: the operator API's
 * `POST /admin/v1/tenants/{id}/members` and `POST /admin/v1/tenants/{id}/api-keys`, with the same
 * schemas and service calls. Each prints a credential once: nothing shows it again (only its
 * hash is stored).
 */

import { CreateApiKeyBody } from '../api-keys/schemas.js';
import { createApiKey, SCOPES } from '../api-keys/service.js';
import { IdParam } from '../core/http/schemas.js';
import { validated } from '../core/http/validation.js';
import { randomBase62 } from '../core/ids.js';
import { CreateMemberBody } from '../members/schemas.js';
import { given, stringFlag } from './args.js';
import type { Command } from './command.js';

const TENANT_FLAG = {
  type: 'string',
  required: true,
  placeholder: '<id>',
  description: 'The tenant (ten_…), as `voiceplane tenants list` shows it.',
} as const;

export const createOwnerCommand: Command = {
  name: 'owners create',
  summary: "Create a tenant's console owner, who signs in to /console and invites the rest.",
  description: [
    'Creates a console member with the role owner, as POST /admin/v1/tenants/{id}/members does.',
    'The password is generated (20 random letters and digits) and shown once, or read from stdin',
    'with --password-stdin (at least 8 characters; one final line break is dropped). A password',
    "is never taken as a flag's value: it would stay in the shell's history and the process list.",
  ],
  flags: {
    tenant: TENANT_FLAG,
    email: {
      type: 'string',
      required: true,
      placeholder: '<email>',
      description: "The owner's email address.",
    },
    name: { type: 'string', placeholder: '<name>', description: "The owner's name (1-200 characters)." },
    'password-stdin': {
      type: 'boolean',
      description: 'Read the password from stdin instead of generating one.',
    },
  },
  fieldFlags: { id: '--tenant', password: 'the password' },
  examples: [
    'voiceplane owners create --tenant ten_123 --email ada@acme.example --name "Ada Lovelace"',
    'voiceplane owners create --tenant ten_123 --email ada@acme.example --password-stdin < password.txt',
  ],
  async run(context, flags) {
    const { id: tenantId } = validated(IdParam, { id: stringFlag(flags, 'tenant') });
    const generated = flags['password-stdin'] ? undefined : randomBase62(20);
    const password = generated ?? (await context.readStdin('password-stdin'));
    const body = validated(
      CreateMemberBody,
      given({ email: stringFlag(flags, 'email'), password, name: stringFlag(flags, 'name'), role: 'owner' }),
    );
    const services = await context.services();
    const tenant = await services.tenants.get(tenantId);
    const member = await services.members.create(tenant.id, body);
    const signInUrl = `${context.config.publicBaseUrl}/console/sign-in`;
    return {
      json: { data: member, sign_in_url: signInUrl, generated_password: generated ?? null },
      text: [
        `Created owner ${member.id} (${member.email}) of tenant ${tenant.id} (${tenant.name}).`,
        `Sign in to the agency console at ${signInUrl}`,
        `  email:     ${member.email}`,
        generated
          ? `  password:  ${generated}   (generated; shown only now, pass it on safely)`
          : '  password:  the one read from stdin',
      ],
    };
  },
};

export const createApiKeyCommand: Command = {
  name: 'api-keys create',
  summary: 'Create a partner API key for a tenant; the key is shown once.',
  description: [
    'Creates the key as POST /admin/v1/tenants/{id}/api-keys does. Only its hash is stored: copy',
    'the key from this output (with --json: .data.key); nothing can show it again.',
  ],
  flags: {
    tenant: TENANT_FLAG,
    scopes: {
      type: 'string',
      required: true,
      placeholder: '<scope,…>|all',
      description: `Comma-separated scopes, or all: ${SCOPES.join(', ')}.`,
    },
    env: { type: 'string', placeholder: 'test|live', description: 'The key environment (default test).' },
    name: { type: 'string', placeholder: '<name>', description: 'A label for the key (1-200 characters).' },
    'expires-at': {
      type: 'string',
      placeholder: '<timestamp>',
      description: 'When the key stops working, ISO 8601 (e.g. 2030-01-01T00:00:00Z); default never.',
    },
  },
  fieldFlags: { id: '--tenant', expires_at: '--expires-at' },
  examples: [
    'voiceplane api-keys create --tenant ten_123 --scopes all --name "Acme backend"',
    'voiceplane api-keys create --tenant ten_123 --scopes users:read,plans:read --env live --json',
  ],
  async run(context, flags) {
    const { id: tenantId } = validated(IdParam, { id: stringFlag(flags, 'tenant') });
    const scopeList = stringFlag(flags, 'scopes') ?? '';
    const scopes =
      scopeList.trim() === 'all'
        ? [...SCOPES]
        : scopeList
            .split(',')
            .map((scope) => scope.trim())
            .filter(Boolean);
    const body = validated(
      CreateApiKeyBody,
      given({
        scopes,
        env: stringFlag(flags, 'env'),
        name: stringFlag(flags, 'name'),
        expires_at: stringFlag(flags, 'expires-at'),
      }),
    );
    const services = await context.services();
    const tenant = await services.tenants.get(tenantId);
    const issued = await createApiKey(
      { db: services.database.db, clock: services.clock, keyPrefix: services.config.apiKeyPrefix },
      tenant.id,
      body,
    );
    return {
      json: { data: issued },
      text: [
        `Created ${issued.env} API key ${issued.id}${issued.name ? ` (${issued.name})` : ''} for tenant ${tenant.id} (${tenant.name}).`,
        `  scopes:   ${issued.scopes.join(', ')}`,
        `  expires:  ${issued.expires_at ?? 'never'}`,
        'The key, shown only now (only its hash is stored):',
        `  ${issued.key}`,
      ],
    };
  },
};
