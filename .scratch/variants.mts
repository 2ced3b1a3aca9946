import pg from 'pg';
const url = 'postgres://postgres@127.0.0.1:5432/vp_bench_b290c81c3a';
const client = new pg.Client({ connectionString: url });
await client.connect();
const tenant = (await client.query("select id from tenants where name='Bench Agency'")).rows[0].id;
const terms = (process.env.TERMS ?? 'mar,ell,son,and,lia,tho,nor,wil').split(',');
const now = new Date();
const planJoinOld = `
    LEFT JOIN LATERAL (
      SELECT s.plan_id FROM subscriptions s
      WHERE s.tenant_id = page.tenant_id AND s.user_id = page.id
        AND s.status IN ('active', 'trialing') AND s.current_period_start <= $3
      ORDER BY s.current_period_start DESC, s.id DESC LIMIT 1
    ) current_subscription ON true
    LEFT JOIN plans current_plan ON current_plan.id = current_subscription.plan_id`;
const planJoinNew = `
    LEFT JOIN LATERAL (
      SELECT s.plan_id, (SELECT p.name FROM plans p WHERE p.id = s.plan_id) AS plan_name FROM subscriptions s
      WHERE s.tenant_id = page.tenant_id AND s.user_id = page.id
        AND s.status IN ('active', 'trialing') AND s.current_period_start <= $3
      ORDER BY s.current_period_start DESC, s.id DESC LIMIT 1
    ) current_subscription ON true`;
const cols = `page.id, page.name, page.email, page.phone, page.status, page.created_at`;
const walk = `SELECT u.id, u.tenant_id, u.name, u.email, u.phone, u.status, u.created_at FROM users u WHERE u.tenant_id = $1 AND u.deleted_at IS NULL AND (lower(u.name) LIKE $2 ESCAPE '\\' OR lower(u.email) LIKE $2 ESCAPE '\\') ORDER BY u.created_at DESC, u.id DESC LIMIT 100`;
const walkST = `SELECT u.id, u.tenant_id, u.name, u.email, u.phone, u.status, u.created_at FROM users u WHERE u.tenant_id = $1 AND u.deleted_at IS NULL AND u.search_text LIKE $2 ESCAPE '\\' ORDER BY u.created_at DESC, u.id DESC LIMIT 100`;
const walkS = walk.replace(/\(lower\(u\.name\).*\) ORDER/, "u.search_text LIKE $2 ESCAPE '\\' ORDER");
const variants: Record<string, string> = {
  s_old: `SELECT ${cols}, current_subscription.plan_id, current_plan.name FROM (${walkS}) page ${planJoinOld} ORDER BY page.created_at DESC, page.id DESC`,
  s_nojoin: `SELECT ${cols}, $3::timestamptz FROM (${walkS}) page ORDER BY page.created_at DESC, page.id DESC`,
  s_new: `SELECT ${cols}, current_subscription.plan_id, current_subscription.plan_name FROM (${walkS}) page ${planJoinNew} ORDER BY page.created_at DESC, page.id DESC`,
  s_saop: `WITH page AS MATERIALIZED (${walkS}),
    cur AS (SELECT DISTINCT ON (s.user_id) s.user_id, s.plan_id FROM subscriptions s
      WHERE s.tenant_id = $1 AND s.user_id = ANY (ARRAY(SELECT id FROM page)) AND s.status IN ('active', 'trialing') AND s.current_period_start <= $3
      ORDER BY s.user_id, s.current_period_start DESC, s.id DESC)
    SELECT ${cols}, cur.plan_id, p.name FROM page LEFT JOIN cur ON cur.user_id = page.id LEFT JOIN plans p ON p.id = cur.plan_id ORDER BY page.created_at DESC, page.id DESC`,

  x_walk_oldjoin: `SELECT ${cols}, current_subscription.plan_id, current_plan.name FROM (${walk}) page ${planJoinOld} ORDER BY page.created_at DESC, page.id DESC`,
  x_walk_newjoin: `SELECT ${cols}, current_subscription.plan_id, current_subscription.plan_name FROM (${walk}) page ${planJoinNew} ORDER BY page.created_at DESC, page.id DESC`,
  x_walk_nojoin: `SELECT ${cols}, $3::timestamptz FROM (${walk}) page ORDER BY page.created_at DESC, page.id DESC`,
};
if (process.argv[2] === 'st') {
  variants.walkST_newjoin = `SELECT ${cols}, current_subscription.plan_id, current_subscription.plan_name FROM (${walkST}) page ${planJoinNew} ORDER BY page.created_at DESC, page.id DESC`;
  variants.walkST_json = `SELECT json_agg(json_build_object('id', page.id, 'name', page.name, 'email', page.email, 'phone', page.phone, 'status', page.status, 'created_at', to_char(page.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'plan_id', current_subscription.plan_id, 'plan_name', current_subscription.plan_name) ORDER BY page.created_at DESC, page.id DESC)::text FROM (${walkST}) page ${planJoinNew}`;
}
const only = process.argv[3];
for (const [name, text] of Object.entries(variants)) {
  if (only ? !name.includes(only) : name.startsWith('x_')) continue;
  let total = 0; const per: string[] = [];
  for (const term of terms) {
    const values = [tenant, `%${term}%`, now];
    const q = { name: name + term, text, values };
    for (let i = 0; i < 10; i++) await client.query(q);
    const times: number[] = [];
    for (let i = 0; i < 80; i++) { const t0 = process.hrtime.bigint(); await client.query(q); times.push(Number(process.hrtime.bigint() - t0) / 1e6); }
    times.sort((a, b) => a - b); const ms = times[40]; total += ms; per.push(`${term}:${ms.toFixed(2)}`);
  }
  console.log(name.padEnd(16), (total / terms.length).toFixed(3), per.join(' '));
}
await client.end();
