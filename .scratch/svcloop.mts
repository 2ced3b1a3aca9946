import { openDatabase } from '../src/core/db.ts';
import { listUsers } from '../src/users/repository.ts';
import { sql } from 'kysely';
const url = 'postgres://postgres@127.0.0.1:5432/vp_bench_b290c81c3a';
const database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1 });
const db = database.db;
const tenant = (await sql<{ id: string }>`select id from tenants where name='Bench Agency'`.execute(db)).rows[0].id;
const terms = ['kim','ole','ava','ric','mar','ell','son','ber','and','lia','tho','nor','wil','eva'];
const known = new Map<string, { total: number; liveUsers: number }>();
const q = (term: string) => ({ search: term, sortBy: 'created_at' as const, sortOrder: 'desc' as const, limit: 100, offset: 0, now: new Date() });
for (const term of terms) { const r = await listUsers(db, tenant, q(term)); known.set(term, { total: r.total!, liveUsers: r.liveUsers }); }
const per = new Map<string, number[]>();
const n = Number(process.env.N ?? 1400);
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) {
  const term = terms[Math.floor(Math.random() * terms.length)];
  const s = process.hrtime.bigint();
  await listUsers(db, tenant, q(term), known.get(term));
  const ms = Number(process.hrtime.bigint() - s) / 1e6;
  if (i > 200) { if (!per.has(term)) per.set(term, []); per.get(term)!.push(ms); }
}
const all = Number(process.hrtime.bigint() - t0) / 1e6 / n;
console.log(terms.map((t) => { const a = per.get(t)!.sort((x, y) => x - y); return `${t}:${a[a.length >> 1].toFixed(2)}`; }).join(' '));
console.log('mean ms/request', all.toFixed(3));
const ps = await sql<any>`select name, generic_plans, custom_plans, left(regexp_replace(statement, '\s+', ' ', 'g'), 60) as s from pg_prepared_statements`.execute(db);
console.table(ps.rows);
await database.close();
