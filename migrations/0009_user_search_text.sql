-- A user search matches `lower(name)` or `lower(email)` containing the term (decisions.md §2).
-- Testing both per row lower-cased two strings for every user a list walks past; the lowered
-- text is now stored once, as `name \n email`. A term without a newline matches search_text
-- exactly when it matches the name or the email (a match cannot span the separator); a term with
-- one is checked against both as well (src/users/repository.ts).
ALTER TABLE users
  ADD COLUMN search_text text GENERATED ALWAYS AS (coalesce(lower(name), '') || E'\n' || lower(email)) STORED;

-- One trigram index over the tenant and the search text replaces the two over name and email:
-- GIN intersects the tenant's entries with the term's, so finding or counting one tenant's
-- matches reads no other tenant's rows, however many share the table.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX users_search_text ON users USING gin (tenant_id, search_text gin_trgm_ops) WHERE deleted_at IS NULL;
DROP INDEX users_search_name;
DROP INDEX users_search_email;
