/**
 * `voiceplane tenants create` and `tenants list`: the operator API's `POST /admin/v1/tenants` and
 * `GET /admin/v1/tenants`, with the same body and query schemas and the same service calls.
 */
import { validated } from '../core/http/validation.js';
import { CreateTenantBody, ListTenantsQuery } from '../tenants/schemas.js';
import { given, integerFlag, stringFlag } from './args.js';
import type { Command } from './command.js';
import { plural, table } from './output.js';

export const createTenantCommand: Command = {
  name: 'tenants create',
  summary: 'Create a tenant (one partner agency).',
  description: [
    'Creates the tenant as POST /admin/v1/tenants does. Its email (SMTP) settings are set later in',
    'the console or with PATCH /admin/v1/tenants/{id}: an SMTP URL holds a password, which a command',
    "line would leave in the shell's history.",
  ],
  flags: {
    name: {
      type: 'string',
      required: true,
      placeholder: '<name>',
      description: "The agency's name (1-200 characters).",
    },
  },
  examples: [
    'voiceplane tenants create --name "Acme Agency"',
    'voiceplane tenants create --name Acme --json',
  ],
  async run(context, flags) {
    const body = validated(CreateTenantBody, given({ name: stringFlag(flags, 'name') }));
    const tenant = await (await context.services()).tenants.create(body);
    return {
      json: { data: tenant },
      text: [
        `Created tenant ${tenant.id} (${tenant.name}).`,
        'Next: its first owner and an API key:',
        `  voiceplane owners create --tenant ${tenant.id} --email <email>`,
        `  voiceplane api-keys create --tenant ${tenant.id} --scopes all`,
      ],
    };
  },
};

export const listTenantsCommand: Command = {
  name: 'tenants list',
  summary: 'List tenants, newest first, one page at a time.',
  flags: {
    page: { type: 'string', placeholder: '<n>', description: 'Page number, from 1 (default 1).' },
    limit: { type: 'string', placeholder: '<n>', description: 'Tenants per page, 1 to 100 (default 20).' },
    'sort-by': {
      type: 'string',
      placeholder: 'created_at|name',
      description: 'Sort key (default created_at).',
    },
    'sort-order': { type: 'string', placeholder: 'asc|desc', description: 'Sort direction (default desc).' },
  },
  fieldFlags: { sort_by: '--sort-by', sort_order: '--sort-order' },
  examples: [
    'voiceplane tenants list',
    'voiceplane tenants list --sort-by name --sort-order asc --limit 100 --json',
  ],
  async run(context, flags) {
    const query = validated(
      ListTenantsQuery,
      given({
        page: integerFlag(flags, 'page'),
        limit: integerFlag(flags, 'limit'),
        sort_by: stringFlag(flags, 'sort-by'),
        sort_order: stringFlag(flags, 'sort-order'),
      }),
    );
    const page = await (await context.services()).tenants.list(query);
    const { pagination } = page;
    const text =
      pagination.total === 0
        ? ['No tenants yet. Create one: voiceplane tenants create --name <name>']
        : [
            ...table(
              ['ID', 'NAME', 'CREATED'],
              page.data.map((tenant) => [tenant.id, tenant.name, tenant.created_at]),
            ),
            `Page ${pagination.page} of ${pagination.pages} (${plural(pagination.total, 'tenant')}).` +
              (pagination.has_more ? ` Next: voiceplane tenants list --page ${pagination.page + 1}` : ''),
          ];
    return { json: page, text };
  },
};
