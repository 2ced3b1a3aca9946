/**
 * Configuration (decisions.md §1) is validated at boot: a bad value stops the server with a
 * message naming the variable — checked on loadConfig for every variable, and on real processes
 * for the exit code and what an operator sees (bad values, an unreachable database without its
 * password in the message, a port already in use).
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { ENGINE } from '../support/databases.js';
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

  it('accepts the documented forms', () => {
    expect(loadConfig({ DATABASE_URL: 'memory://' }).databaseUrl).toBe('memory://');
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x' }).databaseUrl).toBe(
      'postgres://u:p@db:5432/x',
    );
    expect(loadConfig({ DATABASE_URL: 'postgresql://db/x' }).databaseUrl).toBe('postgresql://db/x');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe(
      'https://api.example.com',
    );
    expect(loadConfig({ HOST: '::1', PORT: '8080' }).publicBaseUrl).toBe('http://[::1]:8080');
    expect(loadConfig({ SEED_DEMO: 'false' }).seedDemo).toBe(false);
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1,192.168.1.7' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '::1',
      '192.168.1.7',
    ]);
  });
});

// Process start-up checks do not depend on the storage engine: run them once, in the default run.
describe.skipIf(ENGINE === 'postgres')('the server process', { timeout: 120_000 }, () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL'],
    [{ PROCESSOR: 'paypal' }, 'PROCESSOR'],
  ])('exits with code 78 and a message naming the variable: %o', async (env, variable) => {
    const server = await startServerProcess({ env, waitForReady: false });
    expect(await server.exited).toBe(78);
    expect(server.stderr).toContain(`Invalid configuration: ${variable}`);
  });

  it('an unreachable DATABASE_URL stops the server with a message naming it, without the password', async () => {
    const port = await freePort();
    const server = await startServerProcess({
      env: { DATABASE_URL: `postgres://voiceplane:NotThePassw0rd@127.0.0.1:${port}/nothing` },
      waitForReady: false,
    });
    expect(await server.exited).toBe(1);
    expect(server.stderr).toContain('DATABASE_URL=postgres://voiceplane:***@127.0.0.1');
    expect(server.stderr).toMatch(/ECONNREFUSED/);
    expect(server.stdout + server.stderr).not.toContain('NotThePassw0rd');
  });

  it('a PORT already in use stops the server with a message naming it', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const server = await startServerProcess({
        env: { PORT: String(port), DATABASE_URL: 'memory://' },
        waitForReady: false,
      });
      expect(await server.exited).toBe(1);
      expect(server.stderr).toContain(`PORT ${port} is already in use`);
    } finally {
      blocker.close();
    }
  });
});
