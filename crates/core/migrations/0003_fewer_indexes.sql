-- New ops take seq = their own id (read from sqlite_sequence), so MAX(seq) needs no index;
-- the audit log is read newest-first by id. Fewer indexes, fewer pages per enqueue.
DROP INDEX outbox_seq;
DROP INDEX audit_at;
