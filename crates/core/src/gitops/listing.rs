//! The live state a plan is made against: a fresh, complete, paginated listing of every kind
//! from the control plane, never the possibly-stale cache. Anything short of every page of
//! every kind is an error, so no plan (and so no prune) is ever made from part of the truth.
//! The listing then refreshes the cache, so queued writes start from what the plan saw.

use std::collections::{HashMap, HashSet};

use sqlx::Row;
use switchyard_protocol::ResourceKind;

use crate::Console;
use crate::cache::upsert_server;
use crate::client::ApiClient;
use crate::error::{CoreError, Result};
use crate::gitops::plan::Live;

/// More pages than this for one kind means the server keeps handing out cursors.
const MAX_PAGES: usize = 100_000;
/// Cache rows written per transaction (keeps the writer free for other processes).
const CACHE_CHUNK: usize = 500;

fn incomplete(kind: ResourceKind, why: impl std::fmt::Display) -> CoreError {
    CoreError::Refused {
        code: "listing_incomplete",
        message: format!(
            "the live listing of {} did not complete ({why}); nothing was planned, and no prune \
             runs on a partial listing",
            kind.plural()
        ),
    }
}

/// Every endpoint, target and flow the control plane has, page by page.
pub(crate) async fn fetch(client: &ApiClient) -> Result<Live> {
    let mut live = Live::new();
    for kind in ResourceKind::ALL {
        let mut cursor: Option<String> = None;
        let mut seen_cursors = HashSet::new();
        for _ in 0..MAX_PAGES {
            let page = match client.list_page(kind, cursor.as_deref()).await {
                Ok(page) => page,
                Err(e @ CoreError::Unauthorized { .. }) => return Err(e),
                Err(e) => return Err(incomplete(kind, e)),
            };
            for r in page.items {
                if r.kind != kind {
                    return Err(incomplete(kind, format!("a page held a {}", r.kind)));
                }
                live.insert((kind, r.name.clone()), r);
            }
            match page.next_cursor {
                None => {
                    cursor = None;
                    break;
                }
                Some(c) if !seen_cursors.insert(c.clone()) => {
                    return Err(incomplete(kind, "the server repeated a page cursor"));
                }
                Some(c) => cursor = Some(c),
            }
        }
        if cursor.is_some() {
            return Err(incomplete(kind, format!("more than {MAX_PAGES} pages")));
        }
    }
    Ok(live)
}

impl Console {
    /// Stores a complete listing as the cache's server state: rows whose version moved,
    /// new rows, and rows the server no longer has.
    pub(crate) async fn store_listing(&self, profile: &str, live: &Live) -> Result<()> {
        let cached: HashMap<(String, String), Option<i64>> =
            sqlx::query("SELECT kind, name, server_version FROM cache WHERE profile = ?")
                .bind(profile)
                .fetch_all(&self.inner.pool)
                .await?
                .iter()
                .map(|r| ((r.get("kind"), r.get("name")), r.get("server_version")))
                .collect();
        let mut changed: Vec<(ResourceKind, &str, Option<&switchyard_protocol::Resource>)> =
            Vec::new();
        for ((kind, name), r) in live {
            let key = (kind.as_str().to_owned(), name.clone());
            if cached.get(&key).copied().flatten() != Some(r.version) {
                changed.push((*kind, name, Some(r)));
            }
        }
        for ((kind, name), version) in &cached {
            let Some(k) = ResourceKind::parse(kind) else {
                continue;
            };
            if version.is_some() && !live.contains_key(&(k, name.clone())) {
                changed.push((k, name, None));
            }
        }
        let now = self.now();
        for chunk in changed.chunks(CACHE_CHUNK) {
            let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
            for (kind, name, r) in chunk {
                upsert_server(&mut tx, profile, *kind, name, *r, now).await?;
            }
            tx.commit().await?;
        }
        if !changed.is_empty() {
            self.emit(crate::types::Event::CacheChanged {
                profile: profile.to_owned(),
            });
        }
        Ok(())
    }
}
