/**
 * Starts voiceplane: reads the configuration, opens and migrates the database, seeds the demo
 * tenant on a fresh embedded database, listens, runs the job workers, and shuts down gracefully
 * on SIGTERM/SIGINT (in-flight requests finish, workers finish their jobs, the database closes).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { type AppOptions, buildApp } from './app.js';
import { ConfigError, loadConfig } from './core/config/config.js';
import { openAndMigrate } from './core/db/startup.js';
import { loggerOptions } from './core/observability/logging.js';
import { startTracing } from './core/observability/tracing.js';
import { dataDirSecretKey } from './core/security/secrets.js';
import { scheduleMaintenance } from './maintenance/jobs.js';
import { isDatabaseEmpty, operatorLines, seedDemo } from './seed/demo.js';
import { createServices } from './services.js';
import { sealStoredSmtpPasswords } from './tenants/secrets.js';

/** Starts the service; `appOptions` adds test-only routes (test/operations/fixtures/slow-server.ts). */
export async function startServer(appOptions: Pick<AppOptions, 'extraRoutes'> = {}): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78);
    }
    throw error;
  }

  // Before anything that serves or queries: the spans need the provider registered.
  const tracing = await startTracing();
  // Background work (job failures and retries, the database's outages) logs through the same
  // redaction as requests.
  const logger = pino(loggerOptions(config.logLevel));
  const { database } = await openAndMigrate(config, logger);
  if (!config.secretKeys && !config.databaseUrl) {
    // The embedded database without SECRETS_KEY: a key file beside (not inside) its files.
    const { key, file, created } = dataDirSecretKey(config.dataDir);
    if (created)
      logger.warn(`SECRETS_KEY is not set: stored secrets are sealed with ${file}; back it up with DATA_DIR`);
    config = { ...config, secretKeys: { current: key, previous: [] } };
  }
  const services = createServices({ config, database, logger });
  try {
    await sealStoredSmtpPasswords(database.db, services.secrets);
  } catch (error) {
    await database.close().catch(() => {});
    throw new Error(
      `Could not open the stored SMTP passwords (${(error as Error).message}): set SECRETS_KEY_PREVIOUS to the key they were sealed with`,
    );
  }
  const app = await buildApp(services, appOptions);

  if (database.engine === 'embedded' && config.seedDemo && (await isDatabaseEmpty(services))) {
    const seed = await seedDemo(services);
    const banner = [
      'Demo tenant created (first start with an empty database; SEED_DEMO=false skips this).',
      ...seed.lines,
      `API reference: ${config.publicBaseUrl}/docs   metrics (Prometheus): ${config.publicBaseUrl}/metrics`,
      ...operatorLines(config),
    ];
    process.stdout.write(`\n${banner.join('\n')}\n\n`);
  }
  if (!config.metricsToken) {
    app.log.warn('METRICS_TOKEN is not set: GET /metrics answers anyone who reaches this port');
  }
  if (!config.adminToken) {
    app.log.warn('ADMIN_TOKEN is not set: the operator API (/admin/v1) answers 401 to every request');
  }

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EADDRINUSE'
        ? `PORT ${config.port} is already in use`
        : code === 'EACCES'
          ? `PORT ${config.port} needs privileges this process lacks`
          : code === 'ENOTFOUND' || code === 'EADDRNOTAVAIL' || code === 'EAI_AGAIN'
            ? `HOST ${config.host} is not an address of this machine`
            : (error as Error).message;
    await app.close().catch(() => {});
    await database.close().catch(() => {});
    throw new Error(`Could not listen on HOST=${config.host} PORT=${config.port}: ${reason}`);
  }
  if (config.jobRunners > 0) {
    await scheduleMaintenance(services);
    services.jobRunner.start();
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    // app.close() stops accepting and waits for the requests in flight. A keep-alive connection
    // that goes idle once its answer is sent would hold the close until its keep-alive timeout:
    // close such connections as they go idle.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
    try {
      await app.close();
      clearInterval(sweep);
      await services.jobRunner.stop();
      await database.close();
      await tracing?.shutdown().catch(() => {});
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** True when this file is the program (node dist/server.js, tsx src/server.ts, a cluster process). */
function isProgram(): boolean {
  const entry = process.argv[1];
  return entry !== undefined && fs.realpathSync(entry) === fs.realpathSync(fileURLToPath(import.meta.url));
}

if (isProgram()) {
  startServer().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
