/** Campaigns and recipients as the API shows them (counts read live from the rows and their calls). */
import type { Executor } from '../core/db/database.js';
import { type CampaignRow, type RecipientView, tallyCampaigns } from './repository.js';
import { type Campaign, OUTCOMES, RECIPIENT_STATUSES, type Recipient } from './schemas.js';

const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

/** The campaigns of `rows` with their counts, in the same order. */
export async function campaignViews(executor: Executor, tenantId: string, rows: CampaignRow[]) {
  const tallies = await tallyCampaigns(
    executor,
    tenantId,
    rows.map((row) => row.id),
  );
  return rows.map((row): Campaign => {
    const recipients = Object.fromEntries(
      [...RECIPIENT_STATUSES, 'total'].map((key) => [key, 0]),
    ) as Campaign['recipients'];
    const outcomes = Object.fromEntries(OUTCOMES.map((key) => [key, 0])) as Campaign['outcomes'];
    let minutes = 0;
    for (const tally of tallies) {
      if (tally.campaign_id !== row.id) continue;
      recipients[tally.status] += tally.recipients;
      recipients.total += tally.recipients;
      if (tally.outcome) outcomes[tally.outcome] += tally.recipients;
      minutes += tally.minutes;
    }
    return {
      id: row.id,
      agent_id: row.agent_id,
      name: row.name,
      status: row.status,
      pause_reason: row.pause_reason,
      scheduled_at: iso(row.scheduled_at),
      max_concurrent_calls: row.settings.max_concurrent_calls ?? null,
      calling_hours: row.settings.calling_hours ?? null,
      retry: row.settings.retry ?? null,
      recipients,
      outcomes,
      minutes_used: minutes,
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
      started_at: iso(row.started_at),
      finished_at: iso(row.finished_at),
    };
  });
}

export async function campaignView(executor: Executor, row: CampaignRow): Promise<Campaign> {
  const [view] = await campaignViews(executor, row.tenant_id, [row]);
  return view;
}

export function toRecipient(row: RecipientView): Recipient {
  return {
    position: row.position,
    line: row.line,
    phone: row.phone_number,
    name: row.name,
    email: row.email,
    context: (row.context ?? {}) as Record<string, unknown>,
    status: row.status,
    skip_reason: row.skip_reason,
    call_id: row.call_id,
    outcome: row.outcome,
    attempts: row.attempts,
  };
}
