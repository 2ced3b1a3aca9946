/** Every `voiceplane` command, in the order the help lists them. */
import type { Command } from './command.js';
import { createApiKeyCommand, createOwnerCommand } from './credential-commands.js';
import { createOperatorCommand } from './operator-commands.js';
import { migrateCommand, seedDemoCommand, showConfigCommand } from './setup-commands.js';
import { createTenantCommand, listTenantsCommand } from './tenant-commands.js';

export const COMMANDS: readonly Command[] = [
  migrateCommand,
  createTenantCommand,
  listTenantsCommand,
  createOwnerCommand,
  createApiKeyCommand,
  createOperatorCommand,
  seedDemoCommand,
  showConfigCommand,
];
