/** `voiceplane migrate`, `seed demo` and `config show`: setting a deployment up and looking at it. */
import { ApiError } from '../core/errors.js';
import { isDatabaseEmpty, seedDemo } from '../seed/demo.js';
import type { Command } from './command.js';
import { configLines, configView } from './config-view.js';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Apply pending database migrations, then exit (what npm run db:migrate runs).',
  description: [
    'Applies the numbered migrations the database lacks, in order, as the server does at its start.',
    'The other commands apply them too before they run, so this is for applying them ahead of a start.',
  ],
  flags: {},
  examples: ['voiceplane migrate', 'DATABASE_URL=postgres://… voiceplane migrate --json'],
  async run(context) {
    const applied = await context.migrate();
    return {
      json: { data: { applied } },
      text: [applied.length ? `Applied: ${applied.join(', ')}` : 'Nothing to apply.'],
    };
  },
};

export const seedDemoCommand: Command = {
  name: 'seed demo',
  summary: 'Create the demo tenant (plans, a user, an API key, an agent, a console owner).',
  description: [
    'The demo the server creates on a first start with an empty embedded database, on demand and on',
    'either engine. Only into a database without tenants: it refuses otherwise and changes nothing.',
    'Its API key and the owner password are shown once.',
  ],
  flags: {},
  examples: ['voiceplane seed demo', 'voiceplane seed demo --json'],
  async run(context) {
    const services = await context.services();
    if (!(await isDatabaseEmpty(services))) {
      throw new ApiError(
        'conflict',
        'The database already holds tenants: the demo is seeded only into an empty database.',
      );
    }
    const seed = await seedDemo(services);
    const base = context.config.publicBaseUrl;
    return {
      json: {
        data: {
          tenant_id: seed.tenantId,
          api_key: seed.apiKey,
          user: { id: seed.userId, email: seed.userEmail, password: seed.userPassword },
          agent: { id: seed.agent.id, webhook_url: seed.agent.webhookUrl },
          phone_number: seed.phoneNumber,
          owner: { ...seed.owner, sign_in_url: `${base}/console/sign-in` },
        },
      },
      text: ['Demo tenant created (the API key and the owner password are shown only now).', ...seed.lines],
    };
  },
};

export const showConfigCommand: Command = {
  name: 'config show',
  summary: 'Show the configuration this environment gives, secrets redacted.',
  description: [
    'The settings as the server reads them from the environment (defaults filled in), without',
    'opening the database. Tokens, keys and passwords (in URLs too) are shown only as [redacted]',
    'or ***; a SECRETS_KEY by its key id. An invalid variable exits 78 naming it, as the server does.',
  ],
  flags: {},
  examples: ['voiceplane config show', 'voiceplane config show --json'],
  async run(context) {
    const view = configView(context.config);
    return { json: { data: view }, text: configLines(view) };
  },
};
