-- Campaigns keep pace (docs/campaigns.md): the statement that ends a call finds the campaign row
-- of the call, if any, to queue the campaign's job in the same transaction; and a user's credits or
-- the tenant's wallet coming back above zero finds the campaigns they paused. Only rows with a
-- call under way, and campaigns paused for a balance, are indexed: both indexes stay small.
-- Known cost: built inside the migration's transaction (a plain CREATE INDEX blocks writes to the
-- table while it runs, seconds per million rows). On a large live table, create them first by hand
-- with CREATE INDEX CONCURRENTLY under the same names; IF NOT EXISTS then skips them.
CREATE INDEX IF NOT EXISTS campaign_recipients_calling_call ON campaign_recipients (call_id) WHERE status = 'calling';
CREATE INDEX IF NOT EXISTS campaigns_paused_for_balance ON campaigns (tenant_id)
  WHERE status = 'paused' AND pause_reason IN ('insufficient_credits', 'tenant_balance_exhausted');
