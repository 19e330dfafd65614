//! Wire types of the Switchyard control-plane API (contract section 1).
//!
//! Everything a client and the server exchange lives here, so the server, the console core,
//! the CLI and the desktop app agree on one shape. Validation that both sides need (resource
//! names, specs) lives here too: the server is authoritative, clients use it to fail early.

pub mod addresses;
pub mod canonical_json;
pub mod client_certs;
pub mod diagnostics;
pub mod dlq;
pub mod duration;
pub mod edge;
pub mod events;
pub mod headers;
pub mod info;
pub mod merge_patch;
pub mod metrics;
pub mod name;
pub mod problem;
pub mod replay;
pub mod resource;
pub mod retirement;
pub mod secrets;
pub mod strict_json;
pub mod target_test;
pub mod tokens;

pub use client_certs::{
    ActivateCertificateResponse, CertificateExpiry, CertificateState, ClientCertificateInfo,
    ClientCertificateList, UploadCertificateRequest,
};
pub use diagnostics::{
    Diagnostics, DlqRecount, Finding, FindingClass, FindingEvidence, FindingSubject, FixAction,
    RequeueRequest, Requeued, Severity,
};
pub use dlq::{DlqCell, DlqEntry, DlqFilter, DlqGroup, DlqGroupBy, DlqStats};
pub use duration::{DurationError, parse_duration};
pub use edge::{EdgeAttemptAck, EdgeAttemptReport, EdgeLease, EdgeLeaseRequest, RelayedAttempt};
pub use events::{
    Attempt, AttemptOutcome, Delivery, DeliveryState, ErrorClass, Event, EventList, Hop,
    SubmitEventRequest, SubmitEventResponse, is_event_type,
};
pub use info::ServerInfo;
pub use metrics::{
    AttemptFigures, DeliveryMetrics, LatencyMs, MetricsBucket, MetricsGroup, MetricsGroupBy,
    MetricsTotals, MetricsWindow,
};
pub use name::{NameError, validate_name};
pub use problem::{ErrorCode, Problem};
pub use replay::{
    ReplayCounts, ReplayDryRun, ReplayItem, ReplayItemStatus, ReplayRequest, ReplaySelection,
    ReplaySession, ReplayStatus,
};
pub use resource::{
    ApplyRequest, CreateRequest, EndpointSpec, EndpointStatus, FieldError, FlowMode, FlowSpec,
    FlowStatus, Page, Resource, ResourceKind, SigningSecretInfo, TargetSpec, TargetStatus,
    UpdateRequest,
};
pub use retirement::{
    Blocker, DlqDisposition, Retirement, RetirementDryRun, RetirementImpact, RetirementList,
    RetirementRequest, RetirementState, RetirementStep,
};
pub use secrets::{
    DEFAULT_OVERLAP_SECONDS, ExpireSecretResponse, ExpiringSecret, MAX_OVERLAP_SECONDS,
    MAX_SIGNING_SECRETS, NewSigningSecret, RotateSecretRequest, RotateSecretResponse,
    RotationStatus, SigningSecretList,
};
pub use target_test::{TargetTestRequest, TargetTestResult};
pub use tokens::{Caller, CreateTokenRequest, CreatedToken, Role, TokenInfo, TokenList};
