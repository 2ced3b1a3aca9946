/**
 * The machine's own limits, as a separate process: a bare Fastify app (no logging, no auth, no
 * schemas) on the same driver path as the service: a `pg` pool of 10 on PostgreSQL, or PGlite
 * behind `createPgConfig` (a pool of one) on the embedded engine.
 *   GET  /static     a fixed JSON body (the HTTP ceiling)
 *   GET  /read/:id   one SELECT … WHERE id = $1 on the seeded users
 *   POST /write      one single-row INSERT in its own transaction
 *   POST /hash       one password hash as the service computes it (Argon2id, t = 2, p = 1, at
 *                    BASELINE_HASH_MEMORY_KIB, default 19456) on the service's own hashing
 *                    threads (one per core, nice 19: BASELINE_HASH_THREADS_MODULE names the
 *                    built dist/core/security/password-threads.js), nothing else
 * Environment: PORT, BASELINE_DATABASE_URL (postgres://…) or BASELINE_DATA_DIR (embedded),
 * BASELINE_HASH_THREADS_MODULE.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import Fastify from 'fastify';
import pg from 'pg';

const STATIC_BODY = { status: 'ok', service: 'voiceplane', version: '1.0' };

async function openPool(): Promise<{ pool: pg.Pool; close(): Promise<void> }> {
  const url = process.env.BASELINE_DATABASE_URL;
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DB_POOL_SIZE) || 10 });
    pool.on('error', () => {});
    return { pool, close: () => pool.end() };
  }
  const dataDir = process.env.BASELINE_DATA_DIR;
  if (!dataDir) throw new Error('set BASELINE_DATABASE_URL or BASELINE_DATA_DIR');
  // Same layout and extensions as src/core/db/database.ts.
  const pglite = await PGlite.create({
    dataDir: path.join(dataDir, 'pgdata'),
    extensions: { btree_gin, pg_trgm },
  });
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
  return {
    pool,
    async close() {
      await pool.end();
      await pglite.close();
    },
  };
}

async function main() {
  const { pool, close } = await openPool();
  const app = Fastify({ logger: false });

  app.get('/static', async () => STATIC_BODY);

  app.get<{ Params: { id: string } }>('/read/:id', async (request, reply) => {
    const result = await pool.query('SELECT id, email, name, status, created_at FROM users WHERE id = $1', [
      request.params.id,
    ]);
    if (result.rows.length === 0) return reply.code(404).send({ error: 'not found' });
    return result.rows[0];
  });

  app.post('/write', async (_request, reply) => {
    const id = crypto.randomUUID();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        'INSERT INTO bench_baseline_writes (id, tenant_id, payload, created_at) VALUES ($1, $2, $3, now())',
        [id, 'ten_baseline', JSON.stringify({ n: 1 })],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    return reply.code(201).send({ id });
  });

  const memoryCost = Number(process.env.BASELINE_HASH_MEMORY_KIB || 19456);
  // The same threads as the service's, so users_create's ratio to this measures everything a
  // creation does besides its hash, not a better or worse way of hashing.
  const threadsModule = process.env.BASELINE_HASH_THREADS_MODULE;
  if (!threadsModule)
    throw new Error('BASELINE_HASH_THREADS_MODULE must name dist/core/security/password-threads.js');
  const { runHashJob } = (await import(
    threadsModule
  )) as typeof import('../src/core/security/password-threads.js');
  app.post<{ Body: { password: string } }>('/hash', async (request, reply) => {
    // algorithm 2: Argon2id (the binding's const enum does not survive transpilation).
    const stored = await runHashJob({
      op: 'argon2-hash',
      password: request.body.password,
      options: { algorithm: 2, memoryCost, timeCost: 2, parallelism: 1 },
    });
    return reply.code(201).send({ length: stored.length });
  });

  await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  const stop = async () => {
    await app.close();
    await close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
