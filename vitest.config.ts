import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The PostgreSQL pass (`npm run test:postgres`, TEST_DATABASE=postgres) runs the suites whose outcome
 * can depend on the database engine: concurrency between connections and processes (the embedded
 * database serialises everything on one connection), locks, query plans, ledgers and the job queue.
 * The rest — HTML pages and browsers, the CLI's and the server's processes on a data directory,
 * validation, HTTP edges, OpenAPI, the SDK, wire formats of the voice engines and the card
 * processor — runs the same SQL through the same services and stays on the embedded pass. Suites
 * that need PostgreSQL itself (outages, several processes, migrations on a server) run in the
 * embedded pass whenever a server answers on localhost (test/operations/postgres.ts), so they are
 * not repeated here.
 */
const POSTGRES_PASS = [
  'test/calls/**/*.test.ts',
  'test/campaigns/**/*.test.ts',
  'test/credits/**/*.test.ts',
  'test/subscriptions/**/*.test.ts',
  'test/top-ups/**/*.test.ts',
  'test/usage/**/*.test.ts',
  'test/wallets/**/*.test.ts',
  'test/processor-accounts/**/*.test.ts',
  'test/plans/**/*.test.ts',
  'test/users/**/*.test.ts',
  'test/sessions/**/*.test.ts',
  'test/agents/**/*.test.ts',
  'test/do-not-call/**/*.test.ts',
  'test/branding/**/*.test.ts',
  'test/operator/**/*.test.ts',
  'test/events/**/*.test.ts',
  'test/emails/outbox-delivery.test.ts',
  'test/emails/welcome-email.test.ts',
  'test/core/idempotency.test.ts',
  'test/core/job-*.test.ts',
  'test/core/compiled-queries.test.ts',
  'test/operations/job-retention.test.ts',
  'test/operations/table-maintenance.test.ts',
  'test/metrics/scrape-plans.test.ts',
  'test/rate-limits/partner-limits.test.ts',
  'test/tools/tools.test.ts',
  'test/insights/**/*.test.ts',
];
/** Within the PostgreSQL pass's folders: suites of input handling, wire formats and pages, or that bring their own PostgreSQL. */
const EMBEDDED_ONLY = [
  'test/calls/fuzz.test.ts',
  'test/calls/workers.test.ts',
  'test/calls/cap-workers.test.ts',
  'test/events/ssrf.test.ts',
  'test/events/connections.test.ts',
  'test/events/crash.test.ts',
  'test/operator/console-browser.test.ts',
  'test/operator/console-http.test.ts',
];
const postgresPass = process.env.TEST_DATABASE === 'postgres';

export default defineConfig({
  test: {
    include: postgresPass ? POSTGRES_PASS : ['test/**/*.test.ts'],
    // The PostgreSQL failover test has its own run (npm run test:failover, vitest.failover.config.ts).
    exclude: [...configDefaults.exclude, 'test/failover/**', ...(postgresPass ? EMBEDDED_ONLY : [])],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // Compressed simulated time for every server and CLI the tests start (docs/engines.md).
    env: { SIMULATED_REALTIME: 'false' },
    pool: 'forks',
    maxWorkers: 2,
    // Each worker process loads the sources once for all its files instead of once per file (about
    // a third of the suite's time). Files share modules, not state: each starts its own app,
    // database and servers, and a test must not depend on a module evaluated afresh (vi.mock of a
    // module the app already loaded does not reach it; count through the module's own API instead).
    isolate: false,
    reporters: ['default', './test/support/slowest-files.ts'],
  },
});
