import { defineConfig } from 'vitest/config';

/**
 * `npm run test:failover`: the PostgreSQL failover test (test/failover/), apart from `npm test`. It
 * starts etcd, two Patroni nodes and HAProxy, and skips with a message when they are not installed.
 */
export default defineConfig({
  test: {
    include: ['test/failover/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 240_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
