//! The console's GitOps entry points: plan a commit against live state, and apply a plan
//! through the outbox (each write keyed by its content, with provenance `gitops`).

use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::gitops::plan::{PlanInput, plan};
use crate::gitops::types::*;
use crate::gitops::{listing, manifest, repo};
use crate::types::{EnqueueOptions, Origin, Write};
use switchyard_protocol::addresses::AddressPolicy;

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CoreError::Io {
            message: format!("reading the repository stopped: {e}"),
            source: None,
        })?
}

impl Console {
    /// Records a source for a profile after checking that the repository, the ref and the
    /// folder can be read (nothing is planned or queued).
    pub async fn gitops_add_source(
        &self,
        profile: &str,
        spec: &SourceSpec,
    ) -> Result<GitopsSource> {
        self.profile(profile).await?;
        let spec = spec.clone();
        let resolved = blocking(move || {
            let resolved = repo::resolve(&spec)?;
            repo::read(&resolved.spec)?;
            Ok(resolved)
        })
        .await?;
        self.gitops_save_source(profile, &resolved).await?;
        self.gitops_source(profile, &resolved.id).await
    }

    /// Plans applying the commit `spec.git_ref` names: reads and validates its manifests,
    /// lists the control plane completely (never the cache), and compares. Queues nothing;
    /// records the source and refreshes the cache from the listing.
    pub async fn gitops_plan(
        &self,
        profile: &str,
        spec: &SourceSpec,
        opts: PlanOptions,
    ) -> Result<GitopsPlan> {
        self.profile(profile).await?;
        let spec = spec.clone();
        let (resolved, files, parsed) = blocking(move || {
            let resolved = repo::resolve(&spec)?;
            let files = repo::read(&resolved.spec)?;
            let parsed = manifest::parse(&files.files);
            Ok((resolved, files, parsed))
        })
        .await?;
        let client = self.client(profile).await?;
        let live = match listing::fetch(&client).await {
            Ok(live) => live,
            // Without the listing only the documents' own problems are known: those first.
            Err(e) => return Err(parsed.into_result().err().unwrap_or(e)),
        };
        // The address policy the server judges target URLs by, so a URL it would refuse
        // fails the plan instead of an apply's write; unknown (not checked) from a server too
        // old to advertise it.
        let policy = client
            .info()
            .await
            .ok()
            .and_then(|info| AddressPolicy::advertised(&info));
        // Every problem at once: the documents' own and those against the control plane.
        let manifests = parsed.finish(&live, policy.as_ref())?;
        self.store_listing(profile, &live).await?;
        self.gitops_fold(profile).await?;
        let inventory = self.gitops_inventory(profile).await?;
        let (mut items, summary) = plan(&PlanInput {
            profile,
            source: &resolved.id,
            commit: &files.commit,
            manifests: &manifests,
            live: &live,
            inventory: &inventory,
            opts: &opts,
        })?;
        self.gitops_settle_keys(&mut items).await?;
        self.gitops_save_source(profile, &resolved).await?;
        Ok(GitopsPlan {
            profile: profile.to_owned(),
            source: resolved.id,
            spec: resolved.spec,
            commit: files.commit,
            commit_title: files.title,
            planned_at: self.now(),
            prune: opts.prune,
            self_heal: opts.self_heal,
            manifests: u32::try_from(manifests.len()).unwrap_or(u32::MAX),
            summary,
            items,
        })
    }

    /// Queues a plan's writes in wave order, each under its content-derived key and with the
    /// plan's base version as `If-Match`, so a resource changed since the plan needs
    /// attention instead of being overwritten. Re-applying a plan whose writes are already
    /// queued (a crash, a second click) queues nothing new. Returns at once; sync sends.
    pub async fn gitops_apply(&self, plan: &GitopsPlan) -> Result<ApplyReport> {
        self.gitops_fold(&plan.profile).await?;
        self.refuse_if_other_commit_in_flight(plan).await?;
        let (mut queued, mut resumed, mut op_ids) = (0, 0, Vec::new());
        for item in plan.items.iter().filter(|i| i.action.writes()) {
            let done = self
                .enqueue_with(&plan.profile, write_of(item)?, options(plan, item))
                .await
                .map_err(|e| stale(item, e))?;
            if done.replayed {
                resumed += 1;
            } else {
                queued += 1;
            }
            op_ids.push(done.op.id);
        }
        self.gitops_record_plan(plan).await?;
        Audit::new(self.now(), &self.inner.opts.actor, "gitops.apply", "ok")
            .profile(&plan.profile)
            .detail(format!(
                "{} {}: {queued} queued, {resumed} already queued",
                plan.source,
                &plan.commit[..plan.commit.len().min(12)]
            ))
            .insert(&self.inner.writer)
            .await?;
        self.gitops_fold(&plan.profile).await?;
        self.emit_counts(&plan.profile).await;
        let progress = self
            .gitops_apply_progress(&plan.profile, &plan.source, &plan.commit, &op_ids)
            .await?;
        Ok(ApplyReport {
            profile: plan.profile.clone(),
            source: plan.source.clone(),
            commit: plan.commit.clone(),
            queued,
            resumed,
            op_ids,
            progress,
        })
    }

    /// One apply of a source at a time: writes of another commit still queued would land
    /// between this plan and its writes. The same commit's writes are resumed instead.
    async fn refuse_if_other_commit_in_flight(&self, plan: &GitopsPlan) -> Result<()> {
        let other: Option<(String, i64)> = sqlx::query_as(
            "SELECT g.commit_id, COUNT(*) FROM gitops_ops g JOIN outbox o ON o.id = g.op_id \
             WHERE g.profile = ? AND g.source = ? AND g.commit_id != ? \
             AND o.state IN ('pending', 'sending', 'needs_attention') GROUP BY g.commit_id LIMIT 1",
        )
        .bind(&plan.profile)
        .bind(&plan.source)
        .bind(&plan.commit)
        .fetch_optional(&self.inner.pool)
        .await?;
        match other {
            None => Ok(()),
            Some((commit, n)) => Err(CoreError::Refused {
                code: "apply_in_progress",
                message: format!(
                    "{n} write(s) of commit {} of this source are still queued or need attention; \
                     sync them (switchyard sync --until-drained) or settle them in the outbox, then plan again",
                    &commit[..commit.len().min(12)]
                ),
            }),
        }
    }
}

fn write_of(item: &PlanItem) -> Result<Write> {
    let spec = || {
        item.desired.clone().ok_or_else(|| {
            CoreError::invalid("plan", format!("{} {:?} has no spec", item.kind, item.name))
        })
    };
    Ok(match item.action {
        PlanAction::Create => Write::Create {
            kind: item.kind,
            name: item.name.clone(),
            spec: spec()?,
        },
        // The whole desired spec, declaratively, conditional on the planned version.
        PlanAction::Update => Write::Apply {
            kind: item.kind,
            name: item.name.clone(),
            spec: spec()?,
        },
        PlanAction::Delete => Write::Delete {
            kind: item.kind,
            name: item.name.clone(),
        },
        other => {
            return Err(CoreError::invalid(
                "plan",
                format!("{} is not a write", other.as_str()),
            ));
        }
    })
}

fn options(plan: &GitopsPlan, item: &PlanItem) -> EnqueueOptions {
    EnqueueOptions {
        idempotency_key: item.key.clone(),
        if_match: item.base_version,
        origin: Origin::Gitops {
            source: plan.source.clone(),
            commit: plan.commit.clone(),
            path: item.path.clone().unwrap_or_default(),
        },
        fingerprint: None,
    }
}

/// A write the local view refuses (the cache learned of a change after the plan).
fn stale(item: &PlanItem, e: CoreError) -> CoreError {
    match e {
        CoreError::Invalid { message, .. } | CoreError::NotFound { what: message } => {
            CoreError::Refused {
                code: "plan_stale",
                message: format!(
                    "{} {:?} changed since the plan ({message}); plan again (writes queued so far \
                     keep their keys and are resumed, not repeated)",
                    item.kind, item.name
                ),
            }
        }
        other => other,
    }
}
