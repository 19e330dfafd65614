//! `switchyard-control-plane rotate-main-key`: a new main key seals from now on, and every
//! sealed value is re-sealed under it, in batches, resumably.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::sealing::{SealError, Sealer, default_key_path};

/// What a rotation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    pub key_file: PathBuf,
    /// The key that seals now.
    pub current: String,
    /// Whether this run added that key (`false`: it finished an earlier, interrupted run).
    pub added: bool,
    pub resealed: u64,
    /// Keys still in the file besides the current one.
    pub old_keys: Vec<String>,
}

/// Rotates the main key of the database at `db_url`. When every value is already sealed
/// under the file's current key, a new key is added (the file is replaced atomically, 0600)
/// and everything is re-sealed under it; otherwise the re-sealing an earlier run left
/// unfinished is completed first, without adding another key. With `drop_old`, keys no value
/// uses any more are removed from the file at the end. `progress` hears the running count.
pub async fn rotate(
    db_url: &str,
    key_file: Option<&Path>,
    drop_old: bool,
    max_connections: u32,
    mut progress: impl FnMut(u64),
) -> anyhow::Result<Rotation> {
    let path = match key_file {
        Some(p) => p.to_owned(),
        None => default_key_path(db_url).ok_or_else(|| {
            anyhow::anyhow!(
                "name the main key file with --main-key-file (or SWITCHYARD_MAIN_KEY_FILE)"
            )
        })?,
    };
    let ring = Sealer::from_file(&path).map_err(|e| match e {
        SealError::KeyFile { .. } if !path.exists() => anyhow::anyhow!(
            "{} does not exist: a control plane creates it on its first start; there is nothing to rotate yet",
            path.display()
        ),
        other => other.into(),
    })?;
    let store = crate::store::open_with(db_url, max_connections, Arc::new(ring)).await?;
    store.check_sealed().await?;
    // Values left under an older key by an interrupted run: finish that run first.
    let mut resealed = reseal_all(store.as_ref(), &mut progress, 0).await?;
    drop(store);
    let mut ring = Sealer::from_file(&path)?;
    let added = resealed == 0;
    if added {
        ring = ring.with_new_key();
        ring.write_file(&path)?;
        let store = crate::store::open_with(db_url, max_connections, Arc::new(ring)).await?;
        resealed = reseal_all(store.as_ref(), &mut progress, 0).await?;
        ring = Sealer::from_file(&path)?;
    }
    if drop_old {
        ring = ring.only_current();
        ring.write_file(&path)?;
    }
    let current = ring.current_id().to_owned();
    let old_keys = ring
        .key_ids()
        .into_iter()
        .filter(|id| *id != current)
        .map(str::to_owned)
        .collect();
    Ok(Rotation {
        key_file: path,
        current,
        added,
        resealed,
        old_keys,
    })
}

async fn reseal_all(
    store: &dyn crate::store::Store,
    progress: &mut impl FnMut(u64),
    mut done: u64,
) -> anyhow::Result<u64> {
    loop {
        let n = store.reseal_batch(500).await?;
        if n == 0 {
            return Ok(done);
        }
        done += n;
        progress(done);
    }
}
