/**
 * The embedded database without SECRETS_KEY: the server seals secrets with a key file it creates
 * in DATA_DIR (mode 0600, beside the database files, not inside them), warns once, and reads the
 * same file on the next start, so what it sealed still opens.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSecretKey } from '../../src/core/security/secrets.js';
import { ENGINE, migratedDataDir } from '../support/databases.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';

const ADMIN_TOKEN = 'key-file-admin-token-0123456789';
let dataDir: string | undefined;
const servers: ServerProcess[] = [];

afterAll(async () => {
  for (const server of servers) await server.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

// A start-up behaviour of the embedded engine only: run it once, in the default run.
describe.skipIf(ENGINE === 'postgres')(
  'SECRETS_KEY unset on the embedded database',
  { timeout: 120_000 },
  () => {
    it('creates DATA_DIR/secrets.key once and keeps using it across restarts', async () => {
      dataDir = await migratedDataDir('keyfile-');
      const env = { DATA_DIR: dataDir, SECRETS_KEY: null, ADMIN_TOKEN, LOG_LEVEL: 'warn' };
      const first = await startServerProcess({ env });
      servers.push(first);
      const file = path.join(dataDir, 'secrets.key');
      expect(first.stdout).toContain('SECRETS_KEY is not set');
      expect(parseSecretKey(fs.readFileSync(file, 'utf8'))).toHaveLength(32);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const created = await first.request('POST', '/admin/v1/tenants', {
        token: ADMIN_TOKEN,
        body: {
          name: 'Keyed',
          email: { smtp_url: 'smtp://mailer:pw-123@203.0.113.9:2525', from: 'a@b.example' },
        },
      });
      expect(created.status, created.raw).toBe(201);
      const key = fs.readFileSync(file, 'utf8');
      await first.stop();

      // The start-up pass opens every stored password: it would refuse to start with another key.
      const second = await startServerProcess({ env });
      servers.push(second);
      expect(second.stdout).not.toContain('SECRETS_KEY is not set');
      expect(fs.readFileSync(file, 'utf8')).toBe(key);
    });
  },
);
