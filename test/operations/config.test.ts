/**
 * Configuration (docs/design-choices.md) is validated at boot: a bad value stops the server with a
 * message naming the variable — checked on loadConfig for every variable, and on real processes
 * for the exit code and what an operator sees (bad values, an unreachable database without its
 * password in the message, a port already in use).
 */
import fs from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/core/config/config.js';
import { ENGINE, migratedDataDir } from '../support/databases.js';
import { freePort, startServerProcess } from '../support/server-process.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: './data',
      redisUrl: undefined,
      adminToken: undefined,
      apiKeyPrefix: 'vp',
      publicBaseUrl: 'http://127.0.0.1:3000',
      processor: 'simulated',
      telephony: 'simulated',
      seedDemo: true,
      databaseTimeouts: { statementMs: 10_000, queryMs: 15_000, connectMs: 2_000 },
      databasePoolSize: 10,
    });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['REDIS_KEY_PREFIX', 'has space:'],
    ['DB_POOL_SIZE', '0'],
    ['DB_POOL_SIZE', 'ten'],
    ['JOB_WAKE_DELAY_MS', '-1'],
    ['JOB_WAKE_DELAY_MS', '1001'],
    ['JOB_RETENTION_DAYS', '0'],
    ['ADMIN_TOKEN', 'short'],
    ['API_KEY_PREFIX', 'VP'],
    ['API_KEY_PREFIX', 'v_p'],
    ['PUBLIC_BASE_URL', 'ftp://example.com'],
    ['PROCESSOR', 'paypal'],
    ['TELEPHONY', 'twilio-ish'],
    ['SIMULATED_CALL_SECONDS', 'ten'],
    ['SIMULATED_REALTIME', 'yes please'],
    ['SEED_DEMO', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['WORKERS', '-2'],
    ['PASSWORD_HASH_MEMORY_KIB', '512'],
    ['STRIPE_API_BASE', 'not a url'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '0'],
    ['TRUST_PROXY', '11'],
    ['TRUST_PROXY', 'proxy.internal'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '10.0.0.1,'],
    ['SECRETS_KEY', 'too-short'],
    ['SECRETS_KEY', 'ab'.repeat(31)],
    ['SECRETS_KEY_PREVIOUS', 'not a key'],
    ['HTTP_HEADERS_TIMEOUT_MS', '50'],
    ['HTTP_HEADERS_TIMEOUT_MS', '40000'],
    ['HTTP_REQUEST_TIMEOUT_MS', 'soon'],
    ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '-1'],
    ['HTTP_MAX_CONNECTIONS', '0'],
    ['DB_STATEMENT_TIMEOUT_MS', 'soon'],
    ['DB_QUERY_TIMEOUT_MS', '-5'],
    // Not above the statement limit (10 s by default): slow statements would cost their connection.
    ['DB_QUERY_TIMEOUT_MS', '10000'],
    ['DB_CONNECT_TIMEOUT_MS', '0'],
    ['DB_CONNECT_TIMEOUT_MS', 'soon'],
  ])('%s=%s is refused with a message naming the variable', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(name);
    expect((error as Error).message).toContain(name);
  });

  it('PROCESSOR=stripe needs STRIPE_SECRET_KEY', () => {
    expect(() => loadConfig({ PROCESSOR: 'stripe' })).toThrow(/STRIPE_SECRET_KEY/);
    expect(loadConfig({ PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_test_x' }).processor).toBe('stripe');
  });

  it('TELEPHONY=vapi or retell needs its engine’s credentials and takes its base URL', () => {
    const vapi = {
      TELEPHONY: 'vapi',
      VAPI_API_KEY: 'vapi-key',
      VAPI_SERVER_SECRET: 's'.repeat(16),
      VAPI_SERVER_CREDENTIAL_ID: 'cred_1',
    };
    expect(() => loadConfig({ ...vapi, VAPI_API_KEY: '' })).toThrow(
      /VAPI_API_KEY is required when TELEPHONY=vapi/,
    );
    expect(() => loadConfig({ ...vapi, VAPI_SERVER_SECRET: undefined })).toThrow(
      /VAPI_SERVER_SECRET is required/,
    );
    expect(() => loadConfig({ ...vapi, VAPI_SERVER_SECRET: 'short' })).toThrow(
      /VAPI_SERVER_SECRET must be at least 16/,
    );
    expect(() => loadConfig({ ...vapi, VAPI_API_BASE: 'ftp://vapi' })).toThrow(/VAPI_API_BASE/);
    expect(loadConfig(vapi).vapi).toEqual({
      apiKey: 'vapi-key',
      apiBase: 'https://api.vapi.ai',
      serverCredentialId: 'cred_1',
      serverSecret: 's'.repeat(16),
    });
    expect(loadConfig({ ...vapi, VAPI_API_BASE: 'http://127.0.0.1:9/' }).vapi?.apiBase).toBe(
      'http://127.0.0.1:9',
    );
    expect(() => loadConfig({ TELEPHONY: 'retell' })).toThrow(
      /RETELL_API_KEY is required when TELEPHONY=retell/,
    );
    expect(loadConfig({ TELEPHONY: 'retell', RETELL_API_KEY: 'key_x' })).toMatchObject({
      vapi: undefined,
      retell: { apiKey: 'key_x', apiBase: 'https://api.retellai.com', voiceId: '11labs-Adrian' },
    });
    expect(() => loadConfig({ TELEPHONY: 'twilio' })).toThrow(
      /TELEPHONY must be one of simulated, vapi, retell/,
    );
    // The simulator reads none of them.
    expect(loadConfig({ VAPI_API_KEY: 'unused' })).toMatchObject({
      telephony: 'simulated',
      vapi: undefined,
      retell: undefined,
    });
  });

  it('a PostgreSQL DATABASE_URL needs SECRETS_KEY; the embedded database does not', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/x' })).toThrow(/SECRETS_KEY is required/);
    expect(loadConfig({ DATABASE_URL: 'memory://' }).secretKeys).toBeUndefined();
    expect(loadConfig({}).secretKeys).toBeUndefined();
    expect(() => loadConfig({ SECRETS_KEY_PREVIOUS: 'ab'.repeat(32) })).toThrow(/SECRETS_KEY is required/);
  });

  it('SECRETS_KEY takes 32 bytes as hex or base64; SECRETS_KEY_PREVIOUS a comma list of them', () => {
    const hex = 'ab'.repeat(32);
    const base64 = Buffer.alloc(32, 7).toString('base64');
    const base64url = Buffer.alloc(32, 0xfb).toString('base64url');
    const config = loadConfig({ SECRETS_KEY: hex, SECRETS_KEY_PREVIOUS: `${base64}, ${base64url}` });
    expect(config.secretKeys?.current).toEqual(Buffer.alloc(32, 0xab));
    expect(config.secretKeys?.previous).toEqual([Buffer.alloc(32, 7), Buffer.alloc(32, 0xfb)]);
  });

  it('accepts the documented forms', () => {
    const SECRETS_KEY = 'ab'.repeat(32);
    expect(loadConfig({ DATABASE_URL: 'memory://' }).databaseUrl).toBe('memory://');
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x', SECRETS_KEY }).databaseUrl).toBe(
      'postgres://u:p@db:5432/x',
    );
    expect(loadConfig({ DATABASE_URL: 'postgresql://db/x', SECRETS_KEY }).databaseUrl).toBe(
      'postgresql://db/x',
    );
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe(
      'https://api.example.com',
    );
    expect(loadConfig({ HOST: '::1', PORT: '8080' }).publicBaseUrl).toBe('http://[::1]:8080');
    expect(loadConfig({ SEED_DEMO: 'false' }).seedDemo).toBe(false);
    expect(loadConfig({ DB_POOL_SIZE: '30' }).databasePoolSize).toBe(30);
    expect(loadConfig({}).jobWakeDelayMs).toBe(5);
    expect(loadConfig({ JOB_WAKE_DELAY_MS: '0' }).jobWakeDelayMs).toBe(0);
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1,192.168.1.7' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '::1',
      '192.168.1.7',
    ]);
    expect(loadConfig({}).http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 72_000,
      maxConnections: 4096,
    });
    expect(
      loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '60000', HTTP_REQUEST_TIMEOUT_MS: '60000' }).http,
    ).toMatchObject({
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
    });
    expect(
      loadConfig({
        DB_STATEMENT_TIMEOUT_MS: '2000',
        DB_QUERY_TIMEOUT_MS: '3000',
        DB_CONNECT_TIMEOUT_MS: '1000',
      }).databaseTimeouts,
    ).toEqual({ statementMs: 2000, queryMs: 3000, connectMs: 1000 });
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0', DB_QUERY_TIMEOUT_MS: '0' }).databaseTimeouts).toEqual({
      statementMs: 0,
      queryMs: 0,
      connectMs: 2000,
    });
    // The client-side limit needs the server's below it.
    expect(() => loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0' })).toThrow(/DB_QUERY_TIMEOUT_MS/);
  });
});

// Process start-up checks do not depend on the storage engine: run them once, in the default run.
describe.skipIf(ENGINE === 'postgres')('the server process', { timeout: 120_000 }, () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL'],
    [{ PROCESSOR: 'paypal' }, 'PROCESSOR'],
    [{ SECRETS_KEY: 'not-a-key' }, 'SECRETS_KEY'],
    [{ DATABASE_URL: 'postgres://127.0.0.1/x', SECRETS_KEY: null }, 'SECRETS_KEY'],
  ])('exits with code 78 and a message naming the variable: %o', async (env, variable) => {
    const server = await startServerProcess({ env, waitForReady: false });
    expect(await server.exited).toBe(78);
    expect(server.stderr).toContain(`Invalid configuration: ${variable}`);
  });

  it('an unreachable DATABASE_URL stops the server with a message naming it, without its credentials', async () => {
    const port = await freePort();
    const server = await startServerProcess({
      env: { DATABASE_URL: `postgres://voiceplane:NotThePassw0rd@127.0.0.1:${port}/nothing` },
      waitForReady: false,
    });
    expect(await server.exited).toBe(1);
    expect(server.stderr).toContain('DATABASE_URL=postgres://***:***@127.0.0.1');
    expect(server.stderr).toMatch(/ECONNREFUSED/);
    expect(server.stdout + server.stderr).not.toContain('NotThePassw0rd');
  });

  it('a PORT already in use stops the server with a message naming it', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    // A migrated copy: the process gets as far as listening without creating a database first.
    const dataDir = await migratedDataDir('port-in-use-');
    try {
      const server = await startServerProcess({
        env: { PORT: String(port), DATA_DIR: dataDir },
        waitForReady: false,
      });
      expect(await server.exited).toBe(1);
      expect(server.stderr).toContain(`PORT ${port} is already in use`);
    } finally {
      blocker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the simulated carrier', () => {
  it('keeps real time unless told to compress it, so a demo call is never shown ended ahead of time', () => {
    expect(loadConfig({}).simulatedRealtime).toBe(true);
    expect(loadConfig({ SIMULATED_REALTIME: 'false' }).simulatedRealtime).toBe(false);
  });
});
