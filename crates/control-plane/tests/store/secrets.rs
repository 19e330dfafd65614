//! Signing secrets: a rotation schedules the older secrets and refuses a second one during
//! the overlap; racing rotations make one new secret; racing expiries leave a valid one; the
//! signer's view (`active_secrets`) turns at the expiry the listing shows.

use std::sync::Arc;

use futures::future::join_all;
use serde_json::json;
use switchyard_control_plane::store::{
    Expiry, NewRotation, ResourceRow, Rotation, SecretMeta, SigningSecretRow, Store,
};
use switchyard_protocol::ResourceKind;

use crate::support::{Backend, T0, TENANT, conformance};

conformance!(
    a_rotation_schedules_the_older_secret_and_the_signer_obeys_its_expiry,
    a_second_rotation_waits_for_the_overlap_unless_forced,
    racing_rotations_make_one_new_secret,
    the_eleventh_secret_is_refused,
    expiring_promotes_rolls_back_and_never_leaves_none,
    racing_expiries_leave_one_valid_secret,
    another_tenants_target_is_absent,
    an_open_overlap_is_listed_until_it_ends,
);

const OVERLAP: i64 = 60_000;

fn secret(id: &str, n: u8, created_at: i64) -> SigningSecretRow {
    SigningSecretRow {
        id: id.to_owned(),
        // whsec_ + base64 of 32 bytes of n
        secret: format!(
            "whsec_{}",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [n; 32])
        ),
        created_at,
        expires_at: None,
    }
}

/// Target `tg` of [`TENANT`] with its first secret `sec_0`, created at `T0`.
async fn target(store: &Arc<dyn Store>) {
    let mut tx = store.begin().await.unwrap();
    let row = ResourceRow {
        kind: ResourceKind::Target,
        name: "tg".into(),
        version: 1,
        spec: json!({"url": "http://127.0.0.1:9/hook", "timeout_ms": 1000}),
        status: json!({}),
        created_at: T0,
        updated_at: T0,
    };
    assert!(tx.insert_resource(TENANT, &row).await.unwrap());
    tx.insert_signing_secret(TENANT, "tg", &secret("sec_0", 0, T0))
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

async fn rotate(
    store: &Arc<dyn Store>,
    tenant: &str,
    new: &SigningSecretRow,
    now: i64,
    force: bool,
) -> Rotation {
    let mut tx = store.begin().await.unwrap();
    let outcome = tx
        .rotate_signing_secret(&NewRotation {
            tenant,
            target: "tg",
            secret: new,
            now,
            older_expire_at: if force { now } else { now + OVERLAP },
            force,
            limit: 10,
        })
        .await
        .unwrap();
    tx.commit().await.unwrap();
    outcome
}

async fn expire(store: &Arc<dyn Store>, id: &str, now: i64) -> Expiry {
    let mut tx = store.begin().await.unwrap();
    let outcome = tx
        .expire_signing_secret(TENANT, "tg", id, now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    outcome
}

async fn active_ids(store: &Arc<dyn Store>, now: i64) -> Vec<String> {
    store
        .active_secrets(TENANT, "tg", now)
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.id)
        .collect()
}

fn meta(id: &str, created_at: i64, expires_at: Option<i64>) -> SecretMeta {
    SecretMeta {
        id: id.into(),
        created_at,
        expires_at,
    }
}

async fn a_rotation_schedules_the_older_secret_and_the_signer_obeys_its_expiry(b: &Backend) {
    let store = b.open().await;
    target(&store).await;
    let new = secret("sec_1", 1, T0 + 10);
    assert_eq!(
        rotate(&store, TENANT, &new, T0 + 10, false).await,
        Rotation::Rotated {
            previous: vec![meta("sec_0", T0, Some(T0 + 10 + OVERLAP))]
        }
    );
    assert_eq!(
        store.list_signing_secrets(TENANT, "tg").await.unwrap(),
        vec![
            meta("sec_0", T0, Some(T0 + 10 + OVERLAP)),
            meta("sec_1", T0 + 10, None)
        ]
    );
    let ends = T0 + 10 + OVERLAP;
    assert_eq!(active_ids(&store, ends - 1).await, ["sec_0", "sec_1"]);
    assert_eq!(active_ids(&store, ends).await, ["sec_1"]);
    // What the signer holds carries the same expiry, so it judges the boundary alike.
    let keys = store.active_secrets(TENANT, "tg", ends - 1).await.unwrap();
    assert!(keys[0].valid_at(ends - 1) && !keys[0].valid_at(ends));
    assert_eq!(
        keys[1].value, new.secret,
        "the value opens as it was sealed"
    );
    let one = store.signing_secret(TENANT, "tg", "sec_1").await.unwrap();
    assert_eq!(one.map(|k| k.value), Some(new.secret.clone()));
    assert!(
        store
            .signing_secret(TENANT, "tg", "sec_9")
            .await
            .unwrap()
            .is_none()
    );
}

async fn a_second_rotation_waits_for_the_overlap_unless_forced(b: &Backend) {
    let store = b.open().await;
    target(&store).await;
    rotate(&store, TENANT, &secret("sec_1", 1, T0), T0, false).await;
    assert_eq!(
        rotate(&store, TENANT, &secret("sec_2", 2, T0 + 5), T0 + 5, false).await,
        Rotation::InProgress {
            ends_at: T0 + OVERLAP
        }
    );
    assert_eq!(
        store
            .list_signing_secrets(TENANT, "tg")
            .await
            .unwrap()
            .len(),
        2
    );
    // Forced: every older valid secret ends now.
    assert_eq!(
        rotate(&store, TENANT, &secret("sec_2", 2, T0 + 5), T0 + 5, true).await,
        Rotation::Rotated {
            previous: vec![
                meta("sec_0", T0, Some(T0 + 5)),
                meta("sec_1", T0, Some(T0 + 5))
            ]
        }
    );
    assert_eq!(active_ids(&store, T0 + 5).await, ["sec_2"]);
    // Once the overlap is over a rotation needs no force, and it prunes the expired ones.
    let later = T0 + 10 + OVERLAP;
    assert!(matches!(
        rotate(&store, TENANT, &secret("sec_3", 3, later), later, false).await,
        Rotation::Rotated { previous } if previous == vec![meta("sec_2", T0 + 5, Some(later + OVERLAP))]
    ));
    let ids: Vec<String> = store
        .list_signing_secrets(TENANT, "tg")
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["sec_2", "sec_3"]);
}

async fn racing_rotations_make_one_new_secret(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    target(&handles[0]).await;
    let racers = (0..8u8).map(|n| {
        let store = handles[usize::from(n) % 2].clone();
        tokio::spawn(async move {
            rotate(
                &store,
                TENANT,
                &secret(&format!("sec_r{n}"), n + 1, T0 + 1),
                T0 + 1,
                false,
            )
            .await
        })
    });
    let outcomes: Vec<Rotation> = join_all(racers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let won = outcomes
        .iter()
        .filter(|o| matches!(o, Rotation::Rotated { .. }))
        .count();
    assert_eq!(won, 1, "exactly one rotation wins: {outcomes:?}");
    assert!(
        outcomes.iter().all(|o| match o {
            Rotation::Rotated { .. } => true,
            Rotation::InProgress { ends_at } => *ends_at == T0 + 1 + OVERLAP,
            _ => false,
        }),
        "{outcomes:?}"
    );
    assert_eq!(
        handles[1]
            .list_signing_secrets(TENANT, "tg")
            .await
            .unwrap()
            .len(),
        2,
        "the first secret and one new one"
    );
}

async fn the_eleventh_secret_is_refused(b: &Backend) {
    let store = b.open().await;
    target(&store).await;
    let mut tx = store.begin().await.unwrap();
    for n in 1..10u8 {
        tx.insert_signing_secret(
            TENANT,
            "tg",
            &secret(&format!("sec_{n}"), n, T0 + i64::from(n)),
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    assert_eq!(
        rotate(
            &store,
            TENANT,
            &secret("sec_x", 11, T0 + 20),
            T0 + 20,
            false
        )
        .await,
        Rotation::LimitReached
    );
    let held = store.list_signing_secrets(TENANT, "tg").await.unwrap();
    assert_eq!(held.len(), 10);
    assert!(
        held.iter().all(|m| m.expires_at.is_none()),
        "nothing scheduled"
    );
}

async fn expiring_promotes_rolls_back_and_never_leaves_none(b: &Backend) {
    let store = b.open().await;
    target(&store).await;
    assert_eq!(expire(&store, "sec_0", T0 + 1).await, Expiry::LastSecret);
    assert_eq!(expire(&store, "sec_9", T0 + 1).await, Expiry::SecretMissing);

    // Promote: the older secret ends now, the new one stays.
    rotate(&store, TENANT, &secret("sec_1", 1, T0 + 2), T0 + 2, false).await;
    assert_eq!(
        expire(&store, "sec_0", T0 + 3).await,
        Expiry::Expired {
            secret: meta("sec_0", T0, Some(T0 + 3)),
            items: vec![meta("sec_0", T0, Some(T0 + 3)), meta("sec_1", T0 + 2, None)],
        }
    );
    assert_eq!(
        expire(&store, "sec_0", T0 + 4).await,
        Expiry::AlreadyExpired
    );
    assert_eq!(active_ids(&store, T0 + 3).await, ["sec_1"]);

    // Roll back: expiring the newer one during an overlap keeps the older one for good.
    let later = T0 + 10;
    rotate(&store, TENANT, &secret("sec_2", 2, later), later, false).await;
    assert_eq!(
        expire(&store, "sec_2", later + 1).await,
        Expiry::Expired {
            secret: meta("sec_2", later, Some(later + 1)),
            items: vec![
                meta("sec_1", T0 + 2, None),
                meta("sec_2", later, Some(later + 1))
            ],
        }
    );
    assert_eq!(active_ids(&store, later + 2 * OVERLAP).await, ["sec_1"]);
    assert_eq!(expire(&store, "sec_1", later + 2).await, Expiry::LastSecret);
}

async fn racing_expiries_leave_one_valid_secret(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    target(&handles[0]).await;
    rotate(&handles[0], TENANT, &secret("sec_1", 1, T0), T0, false).await;
    let racers = ["sec_0", "sec_1", "sec_0", "sec_1"]
        .into_iter()
        .enumerate()
        .map(|(n, id)| {
            let store = handles[n % 2].clone();
            tokio::spawn(async move { expire(&store, id, T0 + 1).await })
        });
    let outcomes: Vec<Expiry> = join_all(racers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let expired = outcomes
        .iter()
        .filter(|o| matches!(o, Expiry::Expired { .. }))
        .count();
    assert_eq!(expired, 1, "{outcomes:?}");
    assert_eq!(
        active_ids(&handles[1], T0 + 1).await.len(),
        1,
        "{outcomes:?}"
    );
}

async fn another_tenants_target_is_absent(b: &Backend) {
    let store = b.open().await;
    target(&store).await;
    assert_eq!(
        rotate(&store, "other", &secret("sec_1", 1, T0), T0, false).await,
        Rotation::TargetMissing
    );
    let mut tx = store.begin().await.unwrap();
    assert_eq!(
        tx.expire_signing_secret("other", "tg", "sec_0", T0)
            .await
            .unwrap(),
        Expiry::TargetMissing
    );
    drop(tx);
    assert!(
        store
            .list_signing_secrets("other", "tg")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .list_signing_secrets(TENANT, "tg")
            .await
            .unwrap()
            .len(),
        1
    );
}

/// The diagnostics' view of an overlap (`open_overlaps`): listed with its end while an older
/// secret still signs, not at the end itself, and never for another tenant.
async fn an_open_overlap_is_listed_until_it_ends(b: &Backend) {
    let store = b.open().await;
    target(&store).await;
    assert!(
        store
            .open_overlaps(TENANT, T0, 20)
            .await
            .unwrap()
            .is_empty()
    );
    rotate(&store, TENANT, &secret("sec_1", 1, T0 + 10), T0 + 10, false).await;
    let open = store.open_overlaps(TENANT, T0 + 11, 20).await.unwrap();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(
        (open[0].target.as_str(), open[0].ends_at, open[0].expiring),
        ("tg", T0 + 10 + OVERLAP, 1)
    );
    let end = T0 + 10 + OVERLAP;
    assert!(
        store
            .open_overlaps(TENANT, end, 20)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .open_overlaps("other", T0 + 11, 20)
            .await
            .unwrap()
            .is_empty()
    );
}
