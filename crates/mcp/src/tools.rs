//! The tool table: every tool's name, description, schemas, annotations, and the mode it
//! needs. `tools/list` and the refusal of a direct `tools/call` both read it, so a tool is
//! listed exactly when it may be called.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;

use crate::args::*;
use crate::views::*;

/// What `switchyard mcp` lets an agent do. Ordered: each mode includes the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// The default: reads only.
    ReadOnly,
    /// `--allow-writes`: creates, updates, applies, enable/disable, replays of at most the
    /// replay limit.
    Writes,
    /// `--allow-destructive`: also deletes and replays of more than the replay limit.
    Destructive,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Writes => "writes",
            Mode::Destructive => "destructive",
        }
    }
}

/// The annotations of one tool: all four hints are set on every tool.
#[derive(Debug, Clone, Copy)]
struct Hints {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
}

const READ: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};

/// A keyed write: calling it again with the same arguments (and request key) changes nothing.
const fn write(destructive: bool, open_world: bool) -> Hints {
    Hints {
        read_only: false,
        destructive,
        idempotent: true,
        open_world,
    }
}

pub struct ToolDef {
    pub name: &'static str,
    title: &'static str,
    description: &'static str,
    /// The least mode in which it is listed and may be called.
    pub needs: Mode,
    hints: Hints,
    input: fn() -> Arc<JsonObject>,
    output: fn() -> Arc<JsonObject>,
}

fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let raw = Tool::new("schema", "", JsonObject::new())
        .with_input_schema::<T>()
        .input_schema;
    Arc::new(crate::schemas::standard((*raw).clone(), true))
}

fn out<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let raw = Tool::new("schema", "", JsonObject::new())
        .with_output_schema::<T>()
        .output_schema
        .expect("an output schema");
    Arc::new(crate::schemas::standard((*raw).clone(), false))
}

pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "list_resources",
        title: "List resources",
        description: "Endpoints, targets or flows from the console's local cache (works offline; \
refresh: true re-reads the control plane first): spec once queued writes land, server \
version, sync state.",
        needs: Mode::ReadOnly,
        hints: READ,
        input: schema::<ListResourcesArgs>,
        output: out::<ResourceList>,
    },
    ToolDef {
        name: "get_resource",
        title: "Get a resource",
        description: "One endpoint, target or flow: spec, server version, status, sync state and \
queued operations; from the cache, or from the control plane with live: true.",
        needs: Mode::ReadOnly,
        hints: READ,
        input: schema::<GetResourceArgs>,
        output: out::<ResourceResult>,
    },
    ToolDef {
        name: "outbox_status",
        title: "Outbox status",
        description: "The console's queued writes: one by op_id or request_key (with later \
attempts an operator retried as new), or the profile's live writes and recent replay writes.",
        needs: Mode::ReadOnly,
        hints: READ,
        input: schema::<OutboxStatusArgs>,
        output: out::<OutboxStatus>,
    },
    ToolDef {
        name: "dlq_list",
        title: "List the DLQ",
        description: "Dead deliveries (every attempt failed), newest first, filtered like the \
control plane's GET /v1/dlq; pass next_cursor as cursor for the next page.",
        needs: Mode::ReadOnly,
        hints: READ,
        input: schema::<DlqListArgs>,
        output: out::<DlqPageView>,
    },
    ToolDef {
        name: "dlq_stats",
        title: "DLQ counts",
        description: "Counts of dead deliveries grouped by target, error_class, hour, or \
error_class,target (the causes, largest first), with the same filter as dlq_list.",
        needs: Mode::ReadOnly,
        hints: READ,
        input: schema::<DlqStatsArgs>,
        output: out::<DlqStatsView>,
    },
    ToolDef {
        name: "find_event",
        title: "Find an event",
        description: "An event by id, or every event submitted with an event key (newest first), \
each with its deliveries and their attempts.",
        needs: Mode::ReadOnly,
        hints: READ,
        input: schema::<FindEventArgs>,
        output: out::<EventsView>,
    },
    ToolDef {
        name: "replay_status",
        title: "Replay status",
        description: "A replay session by id, or by the request_key start_replay was called with: \
its status (running, completed, cancelled), counts and per-item results, and the queued start.",
        needs: Mode::ReadOnly,
        hints: READ,
        input: schema::<ReplayStatusArgs>,
        output: out::<ReplayStatusView>,
    },
    ToolDef {
        name: "create_resource",
        title: "Create a resource",
        description: "Create an endpoint, target or flow with the given spec.",
        needs: Mode::Writes,
        hints: write(false, false),
        input: schema::<CreateArgs>,
        output: out::<WriteResult>,
    },
    ToolDef {
        name: "update_resource",
        title: "Update a resource",
        description: "Change fields of a resource's spec (JSON merge patch) against the version \
the console knows: a change made meanwhile elsewhere needs attention, never overwritten.",
        needs: Mode::Writes,
        hints: write(true, false),
        input: schema::<UpdateArgs>,
        output: out::<WriteResult>,
    },
    ToolDef {
        name: "apply_resource",
        title: "Apply a resource",
        description: "Declare a resource's whole spec: created when absent, replaced when present.",
        needs: Mode::Writes,
        hints: write(true, false),
        input: schema::<ApplyArgs>,
        output: out::<WriteResult>,
    },
    ToolDef {
        name: "enable_endpoint",
        title: "Enable an endpoint",
        description: "Enable an endpoint: it accepts events again.",
        needs: Mode::Writes,
        hints: write(false, false),
        input: schema::<EndpointArgs>,
        output: out::<WriteResult>,
    },
    ToolDef {
        name: "disable_endpoint",
        title: "Disable an endpoint",
        description: "Disable an endpoint: it refuses new events until enabled again.",
        needs: Mode::Writes,
        hints: write(true, false),
        input: schema::<EndpointArgs>,
        output: out::<WriteResult>,
    },
    ToolDef {
        name: "start_replay",
        title: "Replay dead deliveries",
        description: "Re-deliver dead deliveries (by ids, or all matching a DLQ filter) to their targets, each at most once per session. dry_run: true only counts. \
Sends progress notifications while the call waits.",
        needs: Mode::Writes,
        hints: write(false, true),
        input: schema::<StartReplayArgs>,
        output: out::<ReplayResult>,
    },
    ToolDef {
        name: "delete_resource",
        title: "Delete a resource",
        description: "Delete an endpoint, target or flow (refused by the control plane while \
other resources use it).",
        needs: Mode::Destructive,
        hints: write(true, false),
        input: schema::<DeleteArgs>,
        output: out::<WriteResult>,
    },
];

pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

impl ToolDef {
    pub fn is_write(&self) -> bool {
        self.needs > Mode::ReadOnly
    }

    /// The MCP tool definition.
    pub fn tool(&self) -> Tool {
        let h = self.hints;
        let mut tool = Tool::new(self.name, self.description, (self.input)())
            .with_title(self.title)
            .with_raw_output_schema((self.output)())
            .with_annotations(
                ToolAnnotations::default()
                    .read_only(h.read_only)
                    .destructive(h.destructive)
                    .idempotent(h.idempotent)
                    .open_world(h.open_world),
            );
        tool.title = Some(self.title.to_owned());
        tool
    }
}

/// The tools listed in `mode`.
pub fn listed(mode: Mode) -> Vec<Tool> {
    TOOLS
        .iter()
        .filter(|t| t.needs <= mode)
        .map(ToolDef::tool)
        .collect()
}
