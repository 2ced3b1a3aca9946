import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { listUsers } from '../src/users/repository.ts';
const url = 'postgres://postgres@127.0.0.1:5432/vp_bench_b290c81c3a';
const pool = new pg.Pool({ connectionString: url, max: 2 });
const captured: { sql: string; params: readonly unknown[] }[] = [];
const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: (e) => { if (e.level === 'query') captured.push({ sql: e.query.sql, params: e.query.parameters }); } });
const tenant = (await pool.query("select id from tenants where name='Bench Agency'")).rows[0].id;
const client = await pool.connect();
for (const term of process.argv.slice(2)) {
  const base = { search: term, sortBy: 'created_at' as const, sortOrder: 'desc' as const, limit: 100, offset: 0, now: new Date() };
  const first = await listUsers(db, tenant, base);
  captured.length = 0;
  await listUsers(db, tenant, base, { total: first.total!, liveUsers: first.liveUsers });
  const q = captured[0];
  for (const mode of ['force_custom_plan', 'force_generic_plan']) {
    await client.query(`SET plan_cache_mode = ${mode}`);
    await client.query('DEALLOCATE ALL');
    await client.query(`PREPARE s AS ${q.sql}`);
    const lit = (v: unknown) => v instanceof Date ? `'${v.toISOString()}'` : `'${String(v).replace(/'/g, "''")}'`;
    const plan = await client.query(`EXPLAIN (ANALYZE) EXECUTE s(${q.params.map(lit).join(',')})`);
    console.log('===', term, mode);
    console.log(plan.rows.map((r) => r['QUERY PLAN']).filter((l: string) => !/Buffers|Memory|Planning:/.test(l)).join('\n'));
  }
}
client.release(); await pool.end();
