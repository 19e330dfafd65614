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
    Tool::new("schema", "", JsonObject::new())
        .with_input_schema::<T>()
        .input_schema
}

fn out<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    Tool::new("schema", "", JsonObject::new())
        .with_output_schema::<T>()
        .output_schema
        .expect("an output schema")
}

/// Said by every write tool: how long a request key is remembered.
const KEY_RULES: &str = " Requires request_key: one key per intended change, sent again \
unchanged on every retry (also after a timeout, a lost connection or a restart): the change is \
made once and a retry returns its result with replayed: true. The same key with other \
arguments is refused (request_key_reused) and nothing is queued. A key is remembered for as \
long as this profile exists in the console's data dir (the operation stays in its outbox), \
and the control plane also keeps the derived Idempotency-Key for its key-retention window \
(24 h by default). Keys are scoped to the profile. The write goes through the console's \
outbox (an operator sees it, marked as yours, and can discard it before it is sent); the call \
waits up to wait_seconds for the control plane and returns state confirmed, pending (poll \
outbox_status with the request_key) or needs_attention (with the control plane's problem).";

pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "list_resources",
        title: "List resources",
        description: "List endpoints, targets or flows of the profile from the console's local cache \
(works offline; refresh: true re-reads the control plane first). Each item shows the spec \
once queued writes land, the server version and the sync state.",
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
        description: "The console's queued writes: one operation by op_id or by the request_key a \
write tool was called with (with every later attempt when an operator retried it as new), or \
the live operations and recent replay writes of the profile.",
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
        description: "Change some fields of a resource's spec with a JSON merge patch, against the \
version the console knows (a change made meanwhile by someone else needs attention, never \
overwritten).",
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
        description: "Re-deliver dead deliveries (by ids, or every one matching a DLQ filter) to \
their targets, each at most once per session; the session id is derived from request_key. \
dry_run: true only counts. Replays larger than the server's replay limit need \
--allow-destructive. Progress notifications report the session's progress while the call \
waits.",
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
        let description = if self.is_write() {
            format!("{}{KEY_RULES}", self.description)
        } else {
            self.description.to_owned()
        };
        let h = self.hints;
        let mut tool = Tool::new(self.name, description, (self.input)())
            .with_title(self.title)
            .with_raw_output_schema((self.output)())
            .with_annotations(
                ToolAnnotations::with_title(self.title)
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
