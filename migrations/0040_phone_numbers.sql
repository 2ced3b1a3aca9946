-- Phone numbers the operator imported from the voice engine and assigned to a tenant
-- (docs/phone-numbers.md). A number belongs to one tenant at a time; `inbound_agent_id` answers its
-- inbound calls (null: they are declined). `engine_number_id` is the engine's id for it (Vapi's
-- phone-number id; Retell and the simulator key numbers by the number): inbound calls are routed by it.
CREATE TABLE phone_numbers (
  phone_number text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  engine text NOT NULL,
  engine_number_id text NOT NULL,
  inbound_agent_id text,
  label text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- The tenant's list, newest first; its filter by inbound agent.
CREATE INDEX phone_numbers_tenant_created ON phone_numbers (tenant_id, created_at DESC, phone_number DESC);
CREATE INDEX phone_numbers_tenant_agent ON phone_numbers (tenant_id, inbound_agent_id) WHERE inbound_agent_id IS NOT NULL;
-- An inbound call names the engine's number id (Vapi's call.phoneNumberId).
CREATE UNIQUE INDEX phone_numbers_engine_number ON phone_numbers (engine, engine_number_id);
