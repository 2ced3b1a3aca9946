-- The operator's brand (docs/operator-console.md, "The operator's brand"): the platform's name,
-- logo and colour as changed in the operator console, over the PLATFORM_* environment defaults.
-- One row at most; a null column keeps the environment's value. A new table: nothing is locked.
CREATE TABLE platform_brand (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  name text,
  logo_url text,
  primary_color text,
  updated_at timestamptz NOT NULL
);
