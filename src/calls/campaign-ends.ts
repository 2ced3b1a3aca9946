/**
 * A campaign's call that ends frees one of the campaign's slots (campaigns/scheduler.ts): the
 * statement that ends calls tells each campaign concerned with a job row, in its own transaction,
 * so the campaign fills the slot as soon as the end commits instead of at its next tick. The
 * campaigns feature handles the queue (campaigns/jobs.ts); the job names the campaign only.
 */
import { INSERT_NEW_JOBS } from '../core/jobs/runner.js';

export const CAMPAIGN_CALL_ENDED_QUEUE = 'campaigns.call_ended';
const CAMPAIGN_CALL_ENDED_MAX_ATTEMPTS = 10;

/**
 * CTEs for a statement that ends calls and defines `ended` before them (the calls it moved to a
 * final status: `tenant_id`, `id`, and `at`, the time of the step): one job per campaign that one
 * of them belongs to (a recipient still `calling` with that call). Uses the CTE name `new_job`.
 */
export const TELL_CAMPAIGNS_OF_ENDED_CALLS = `
  new_job AS (
    SELECT DISTINCT ON (r.campaign_id) r.tenant_id, '${CAMPAIGN_CALL_ENDED_QUEUE}'::text AS queue,
           jsonb_build_object('campaignId', r.campaign_id) AS payload, e.at AS run_at,
           ${CAMPAIGN_CALL_ENDED_MAX_ATTEMPTS} AS max_attempts, NULL::text AS singleton_key
    FROM ended e
    JOIN campaign_recipients r ON r.call_id = e.id AND r.tenant_id = e.tenant_id AND r.status = 'calling'
  ), campaign_told AS (
    ${INSERT_NEW_JOBS}
  )`;
