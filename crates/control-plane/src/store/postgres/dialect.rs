//! What PostgreSQL spells differently from SQLite, for the shared SQL (`store/sql/`); each
//! item has its SQLite twin of the same name in `store/sqlite/dialect.rs`.

/// Appended to a read inside a unit of work that must keep the row until commit: a
/// concurrent unit of work on another replica waits for this one.
pub(super) const FOR_UPDATE: &str = " FOR UPDATE";

/// A resource's status does not say it is disabled (`status` is JSON text).
pub(super) const ENABLED: &str =
    "COALESCE(status::jsonb -> 'enabled', 'true'::jsonb) <> 'false'::jsonb";

/// The claim of one delivery (`$6`) for an attempt (`$4`) at hop `$1` by `$2`, leased until
/// `$3`, at `$5`; `$guard` is the condition that makes it a claim. It records the attempt in
/// flight in the same statement and returns the attempt's number, the new lease token and
/// the attempt's number within its hop.
macro_rules! claim {
    ($guard:literal) => {
        concat!(
            "WITH c AS (UPDATE deliveries SET state = 'in_flight', attempts_made = attempts_made + 1, \
             edge_hop_attempts = edge_hop_attempts + (CASE WHEN $1 = 'control_plane_edge' THEN 1 ELSE 0 END), \
             webhook_hop_attempts = webhook_hop_attempts + (CASE WHEN $1 = 'control_plane_edge' THEN 0 ELSE 1 END), \
             lease_owner = $2, lease_until = $3, lease_token = lease_token + 1, current_attempt = $4, \
             next_attempt_at = NULL, updated_at = $5 WHERE id = $6",
            $guard,
            " RETURNING attempts_made, lease_token, \
             CASE WHEN $1 = 'control_plane_edge' THEN edge_hop_attempts ELSE webhook_hop_attempts END AS hop_made) \
             INSERT INTO attempts (id, delivery_id, number, hop, hop_number, started_at, outcome, performed_by) \
             SELECT $4, $6, c.attempts_made, $1, c.hop_made, $5, 'in_flight', $2 FROM c \
             RETURNING number, (SELECT lease_token FROM c), hop_number"
        )
    };
}

/// The claim: only a pending delivery moves to in flight, whoever else tries at once.
pub(super) const CLAIM: &str = claim!(" AND state = 'pending'");

/// The negative control's claim: [`CLAIM`] without its guard. The condition left in its
/// place always holds; it gives `scripts/check-release-binaries.sh` a text to look for.
#[cfg(feature = "fault-injection")]
pub(super) const CLAIM_UNGUARDED: &str = claim!(" AND CAST($6 AS TEXT) IS NOT NULL");

/// Whether [`CLAIM`] also inserts the attempt row.
pub(super) const CLAIM_RECORDS_ATTEMPT: bool = true;

/// Appended to the query of a batch of due work: rows another replica holds are skipped,
/// not waited for, so replicas claiming at once take disjoint batches.
pub(super) const LOCK_DUE: &str = " FOR UPDATE OF d SKIP LOCKED";

/// Appended to a read inside a unit of work that must keep others from changing the rows
/// until commit (while they may still read them).
pub(super) const FOR_SHARE: &str = " FOR SHARE";

/// The column that orders a history table's rows as they were written: its `BIGSERIAL`.
pub(super) const ENTRY_ORDER: &str = "seq";

/// A resource's status says it is disabled (`status` is JSON text).
pub(super) const DISABLED: &str = "(status::jsonb -> 'enabled') = 'false'::jsonb";

/// The larger of its arguments.
pub(super) const GREATEST: &str = "GREATEST";

/// The statement that tells the other replicas' workers that work became due (delivered at
/// commit, on the channel `super::WORK_CHANNEL` listens to).
pub(super) const NOTIFY_WORK: Option<&str> = Some("SELECT pg_notify('switchyard_work', '')");

/// The statement that makes a second history import of a tenant (`$1`), on any replica, wait
/// for this unit of work: a transaction-scoped advisory lock on the tenant.
pub(super) const SERIALISE_HISTORY_IMPORT: Option<&str> =
    Some("SELECT pg_advisory_xact_lock(hashtext('switchyard-history:' || $1))");

/// The statement that keeps every delivery from entering or leaving the DLQ until this unit
/// of work ends. SHARE ROW EXCLUSIVE conflicts with the ROW EXCLUSIVE lock the counting
/// trigger takes (migrations/postgres/0001_schema.sql, dlq_count): a delivery entering or
/// leaving the DLQ meanwhile either committed before this lock (and each later statement,
/// taking a fresh READ COMMITTED snapshot, counts it) or waits and adjusts the recounted row
/// after this commits. Other tenants' counters wait for the moment this takes too.
pub(super) const LOCK_DLQ_COUNTS: Option<&str> =
    Some("LOCK TABLE dlq_counts IN SHARE ROW EXCLUSIVE MODE");

/// The statement that makes a read transaction see one snapshot throughout (READ COMMITTED
/// would give each statement its own).
pub(super) const READ_SNAPSHOT: Option<&str> =
    Some("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");

#[cfg(test)]
mod tests {
    #[test]
    fn work_is_notified_on_the_channel_the_replicas_listen_to() {
        let notify = super::NOTIFY_WORK.unwrap_or_default();
        assert!(notify.contains(&format!("'{}'", super::super::WORK_CHANNEL)));
    }
}
