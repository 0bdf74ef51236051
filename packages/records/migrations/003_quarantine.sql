-- Quarantine (docs/webhook-api.md, Quarantine): an authentic event that failed its schema is kept
-- as a webhook in state `quarantined`, without actions, with why it failed: its problems, one
-- `{ path, message }` per field, as the ingress answered them.
alter table webhooks add column problems jsonb;
