-- The console's overview and calls analytics at scale: per tenant, UTC day (of created_at), agent,
-- final status and ended reason, the finished calls' counts and sums, so a 30-day chart of a
-- tenant with a million calls reads a few thousand rows instead of every call of the window
-- (src/insights/, docs/console.md "Analytics at scale"). Calls not finished yet (queued, dialing,
-- in progress) are not here: the reads add them from the small partial indexes of migration 0014.
--
-- Exact, never stale: statement triggers apply every change of a finished call (its insert, any
-- update of a call that was or becomes final, a delete) in the changing transaction. A call is
-- counted here once, when it reaches its final status, so an agent's calls placed and dialled
-- concurrently never wait on these rows; the upsert takes its rows in key order, so two
-- transactions finishing calls cannot deadlock on them. An update that changes none of the
-- counted fields of a finished call (its analysis, its transcript) nets to zero and writes nothing.
-- agent_id and ended_reason are '' when the call has none (a unique key needs values).
CREATE TABLE call_day_totals (
  tenant_id text NOT NULL,
  day date NOT NULL,
  agent_id text NOT NULL,
  status text NOT NULL,
  ended_reason text NOT NULL,
  calls bigint NOT NULL,
  -- Calls with a start (a person or voicemail answered).
  answered bigint NOT NULL,
  minutes bigint NOT NULL,
  -- Seconds talked on answered calls.
  seconds bigint NOT NULL,
  PRIMARY KEY (tenant_id, day, agent_id, status, ended_reason)
);

CREATE FUNCTION apply_call_day_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO call_day_totals AS t (tenant_id, day, agent_id, status, ended_reason, calls, answered, minutes, seconds)
    SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, coalesce(agent_id, ''), status, coalesce(ended_reason, ''),
           count(*), count(*) FILTER (WHERE started_at IS NOT NULL), coalesce(sum(billed_minutes), 0),
           coalesce(sum(duration_seconds) FILTER (WHERE started_at IS NOT NULL), 0)
    FROM new_calls
    WHERE status IN ('completed', 'no_answer', 'failed')
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, day, agent_id, status, ended_reason) DO UPDATE
      SET calls = t.calls + EXCLUDED.calls, answered = t.answered + EXCLUDED.answered,
          minutes = t.minutes + EXCLUDED.minutes, seconds = t.seconds + EXCLUDED.seconds;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO call_day_totals AS t (tenant_id, day, agent_id, status, ended_reason, calls, answered, minutes, seconds)
    SELECT tenant_id, day, agent_id, status, ended_reason,
           sum(sign), coalesce(sum(sign) FILTER (WHERE started), 0), coalesce(sum(sign * minutes), 0),
           coalesce(sum(sign * seconds) FILTER (WHERE started), 0)
    FROM (
      SELECT 1 AS sign, tenant_id, (created_at AT TIME ZONE 'UTC')::date AS day, coalesce(agent_id, '') AS agent_id,
             status, coalesce(ended_reason, '') AS ended_reason, started_at IS NOT NULL AS started,
             billed_minutes AS minutes, duration_seconds AS seconds
      FROM new_calls WHERE status IN ('completed', 'no_answer', 'failed')
      UNION ALL
      SELECT -1, tenant_id, (created_at AT TIME ZONE 'UTC')::date, coalesce(agent_id, ''),
             status, coalesce(ended_reason, ''), started_at IS NOT NULL, billed_minutes, duration_seconds
      FROM old_calls WHERE status IN ('completed', 'no_answer', 'failed')
    ) AS change
    GROUP BY 1, 2, 3, 4, 5
    HAVING sum(sign) <> 0 OR coalesce(sum(sign) FILTER (WHERE started), 0) <> 0
        OR coalesce(sum(sign * minutes), 0) <> 0 OR coalesce(sum(sign * seconds) FILTER (WHERE started), 0) <> 0
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, day, agent_id, status, ended_reason) DO UPDATE
      SET calls = t.calls + EXCLUDED.calls, answered = t.answered + EXCLUDED.answered,
          minutes = t.minutes + EXCLUDED.minutes, seconds = t.seconds + EXCLUDED.seconds;
  ELSE
    UPDATE call_day_totals AS t
    SET calls = t.calls - d.calls, answered = t.answered - d.answered,
        minutes = t.minutes - d.minutes, seconds = t.seconds - d.seconds
    FROM (
      SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date AS day, coalesce(agent_id, '') AS agent_id, status,
             coalesce(ended_reason, '') AS ended_reason, count(*) AS calls,
             count(*) FILTER (WHERE started_at IS NOT NULL) AS answered, coalesce(sum(billed_minutes), 0) AS minutes,
             coalesce(sum(duration_seconds) FILTER (WHERE started_at IS NOT NULL), 0) AS seconds
      FROM old_calls
      WHERE status IN ('completed', 'no_answer', 'failed')
      GROUP BY 1, 2, 3, 4, 5
    ) AS d
    WHERE t.tenant_id = d.tenant_id AND t.day = d.day AND t.agent_id = d.agent_id AND t.status = d.status
      AND t.ended_reason = d.ended_reason;
  END IF;
  RETURN NULL;
END
$$;

-- One trigger per event: PostgreSQL gives transition tables only to single-event triggers.
CREATE TRIGGER calls_day_totals_insert AFTER INSERT ON calls
  REFERENCING NEW TABLE AS new_calls FOR EACH STATEMENT EXECUTE FUNCTION apply_call_day_totals();
CREATE TRIGGER calls_day_totals_update AFTER UPDATE ON calls
  REFERENCING OLD TABLE AS old_calls NEW TABLE AS new_calls FOR EACH STATEMENT EXECUTE FUNCTION apply_call_day_totals();
CREATE TRIGGER calls_day_totals_delete AFTER DELETE ON calls
  REFERENCING OLD TABLE AS old_calls FOR EACH STATEMENT EXECUTE FUNCTION apply_call_day_totals();

-- TRUNCATE fires no row or transition triggers: start again from nothing.
CREATE FUNCTION clear_call_day_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM call_day_totals;
  RETURN NULL;
END
$$;
CREATE TRIGGER calls_day_totals_truncate AFTER TRUNCATE ON calls
  FOR EACH STATEMENT EXECUTE FUNCTION clear_call_day_totals();

-- The finished calls so far. Known cost: one pass over `calls` (seconds per million calls) while
-- the triggers' creation above holds writes to `calls` until this migration commits, so the
-- backfill and the triggers see the same calls.
INSERT INTO call_day_totals (tenant_id, day, agent_id, status, ended_reason, calls, answered, minutes, seconds)
SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, coalesce(agent_id, ''), status, coalesce(ended_reason, ''),
       count(*), count(*) FILTER (WHERE started_at IS NOT NULL), coalesce(sum(billed_minutes), 0),
       coalesce(sum(duration_seconds) FILTER (WHERE started_at IS NOT NULL), 0)
FROM calls
WHERE status IN ('completed', 'no_answer', 'failed')
GROUP BY 1, 2, 3, 4, 5;
