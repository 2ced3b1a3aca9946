import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { listUsers } from '../src/users/repository.ts';
const url = 'postgres://postgres@127.0.0.1:5432/vp_bench_b290c81c3a';
const pool = new pg.Pool({ connectionString: url, max: 1 });
const captured: { sql: string; params: readonly unknown[] }[] = [];
const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: (e) => { if (e.level === 'query') captured.push({ sql: e.query.sql, params: e.query.parameters }); } });
const tenant = (await pool.query("select id from tenants where name='Bench Agency'")).rows[0].id;
const terms = process.argv.slice(2);
for (const term of terms) {
  const base = { search: term, sortBy: 'created_at' as const, sortOrder: 'desc' as const, limit: 100, offset: 0, now: new Date() };
  const first = await listUsers(db, tenant, base);
  const known = { total: first.total!, liveUsers: first.liveUsers };
  captured.length = 0;
  await listUsers(db, tenant, base, known);
  const q = captured[0];
  console.log('=== term', term, 'total', first.total);
  const plan = await pool.query('EXPLAIN (ANALYZE, BUFFERS) ' + q.sql, q.params as any[]);
  console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
}
await pool.end();
