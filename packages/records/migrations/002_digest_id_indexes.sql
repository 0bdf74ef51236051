-- Entity and customer ids are only ever searched for by equality, so their indexes hold an md5
-- digest of the id (32 characters, whatever the id's length) instead of the id itself: a B-tree
-- entry is limited to about 2.7 KB, and an index on the id made PostgreSQL refuse (SQLSTATE
-- 54000) the row of any id longer than that which did not compress. The ingress bounds ids, but
-- the store must not depend on it. A search compares the digest, to use the index, and the id
-- itself, to keep exact matches only (read-queries.ts).
drop index webhooks_by_entity;
drop index webhooks_by_customer;
create index webhooks_by_entity on webhooks (md5(entity_id), received_at desc, webhook_id desc);
create index webhooks_by_customer on webhooks (md5(customer_id), received_at desc, webhook_id desc);
