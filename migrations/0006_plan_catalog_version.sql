-- Every change to a tenant's plans bumps tenants.plans_version, whoever makes it (the operator
-- API, the seed, a hand-written fix). Processes cache the partner plan list per tenant and
-- revalidate it with one read of this counter (src/plans/catalog-cache.ts).
ALTER TABLE tenants ADD COLUMN plans_version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION bump_plans_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE tenants SET plans_version = plans_version + 1 WHERE id = OLD.tenant_id;
  ELSE
    UPDATE tenants SET plans_version = plans_version + 1 WHERE id = NEW.tenant_id;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER plans_bump_version
  AFTER INSERT OR UPDATE OR DELETE ON plans
  FOR EACH ROW EXECUTE FUNCTION bump_plans_version();
