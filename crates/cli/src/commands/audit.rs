//! `switchyard audit`: the local audit log, newest first.

use switchyard_core::*;

use crate::args::AuditArgs;
use crate::{Exit, emit, table};

pub async fn audit_cmd(
    console: &Console,
    profile: &Option<String>,
    json: bool,
    args: AuditArgs,
) -> anyhow::Result<Exit> {
    let entries = console
        .audit(AuditQuery {
            profile: profile.clone(),
            op_id: args.op,
            action_prefix: args.action,
            limit: Some(args.limit),
            ..Default::default()
        })
        .await?;
    emit(json, &entries, |entries| {
        let rows = entries
            .iter()
            .map(|e| {
                vec![
                    table::time(Some(e.at)),
                    e.actor.clone(),
                    e.profile.clone().unwrap_or_default(),
                    e.action.clone(),
                    e.op_id.map(|i| i.to_string()).unwrap_or_default(),
                    e.resource.clone().unwrap_or_default(),
                    e.outcome.clone(),
                    e.detail.clone().unwrap_or_default(),
                ]
            })
            .collect::<Vec<_>>();
        table::print(
            &[
                "AT", "ACTOR", "PROFILE", "ACTION", "OP", "RESOURCE", "OUTCOME", "DETAIL",
            ],
            &rows,
        );
    });
    Ok(Exit::Ok)
}
