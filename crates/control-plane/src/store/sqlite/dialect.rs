//! What SQLite spells differently from PostgreSQL, for the shared SQL (`store/sql/`); each
//! item has its PostgreSQL twin of the same name in `store/postgres/dialect.rs`.

/// Appended to a read inside a unit of work that must keep the row until commit. Nothing:
/// the unit of work holds the single writer's `BEGIN IMMEDIATE` lock already.
pub(super) const FOR_UPDATE: &str = "";

/// A resource's status does not say it is disabled (`status` is JSON text).
pub(super) const ENABLED: &str = "COALESCE(json_extract(status, '$.enabled'), 1) <> 0";

/// The claim of one delivery (`$6`) for an attempt (`$4`) at hop `$1` by `$2`, leased until
/// `$3`, at `$5`; `$guard` is the condition that makes it a claim. Returns the attempt's
/// number, the new lease token and the attempt's number within its hop. SQLite cannot
/// update inside a `WITH`, so the attempt rows are inserted after the batch
/// ([`CLAIM_RECORDS_ATTEMPT`]).
macro_rules! claim {
    ($guard:literal) => {
        concat!(
            "UPDATE deliveries SET state = 'in_flight', attempts_made = attempts_made + 1, \
             edge_hop_attempts = edge_hop_attempts + (CASE WHEN $1 = 'control_plane_edge' THEN 1 ELSE 0 END), \
             webhook_hop_attempts = webhook_hop_attempts + (CASE WHEN $1 = 'control_plane_edge' THEN 0 ELSE 1 END), \
             lease_owner = $2, lease_until = $3, lease_token = lease_token + 1, current_attempt = $4, \
             next_attempt_at = NULL, updated_at = $5 WHERE id = $6",
            $guard,
            " RETURNING attempts_made, lease_token, \
             CASE WHEN $1 = 'control_plane_edge' THEN edge_hop_attempts ELSE webhook_hop_attempts END"
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
pub(super) const CLAIM_RECORDS_ATTEMPT: bool = false;

/// Appended to the query of a batch of due work. Nothing: the single writer's lock keeps
/// the batch from anyone else until commit.
pub(super) const LOCK_DUE: &str = "";

/// Appended to a read inside a unit of work that must keep others from changing the rows
/// until commit (while they may still read them). Nothing: the writer's lock is held.
pub(super) const FOR_SHARE: &str = "";

/// The column that orders a history table's rows as they were written: the rowid.
pub(super) const ENTRY_ORDER: &str = "rowid";

/// A resource's status says it is disabled (`status` is JSON text).
pub(super) const DISABLED: &str = "json_extract(status, '$.enabled') = 0";

/// The larger of its arguments (SQLite's multi-argument `MAX`).
pub(super) const GREATEST: &str = "MAX";

/// The statement that tells the other replicas' workers that work became due. None: SQLite
/// has one control plane, whose worker is woken in-process.
pub(super) const NOTIFY_WORK: Option<&str> = None;

/// The statement that makes a second history import of a tenant (`$1`) wait for this unit
/// of work. None: the single writer's `BEGIN IMMEDIATE` serialises every write transaction.
pub(super) const SERIALISE_HISTORY_IMPORT: Option<&str> = None;

/// The statement that keeps every delivery from entering or leaving the DLQ until this unit
/// of work ends. None: the unit of work holds SQLite's only write lock.
pub(super) const LOCK_DLQ_COUNTS: Option<&str> = None;

/// The statement that makes a read transaction see one snapshot throughout. None: a
/// read-only connection's transaction sees one WAL snapshot.
pub(super) const READ_SNAPSHOT: Option<&str> = None;
