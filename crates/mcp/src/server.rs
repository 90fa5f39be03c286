//! The MCP handler: lists the tools the policy does not deny outright and dispatches calls.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use warden_engine::{ClientRec, Query};
use warden_policy::ast::Verdict;

use crate::gate::Shared;
use crate::tools::{self, DecisionView, FileResult};

/// The largest `arguments` object of one call, serialised.
pub const ARGUMENT_CAP: usize = 8 << 20;

/// The MCP server: one value per connection, sharing the policy and the workspace.
#[derive(Clone)]
pub struct Warden {
    pub(crate) shared: Arc<Shared>,
    /// Whether the policy is watched (`serve_*` start the watcher).
    pub(crate) reload: bool,
    /// Fired when the connection ends (stdio: end of input), cancelling its calls.
    pub(crate) hangup: CancellationToken,
}

impl Warden {
    /// Whether `name` is hidden from this agent: its policy denies the tool outright (`exec`
    /// only when a rule names it: commands are decided by the exec rules). `explain` is never
    /// hidden: it runs nothing.
    fn hidden(&self, name: &str) -> bool {
        if name == "explain" {
            return false;
        }
        let x = self.shared.explain(Query::Tool { name, path: None });
        x.decision.verdict == Verdict::Deny && (name != "exec" || !x.decision.rules().is_empty())
    }

    /// The tools this agent sees.
    pub fn visible_tools(&self) -> Vec<rmcp::model::Tool> {
        tools::NAMES.iter().filter(|n| !self.hidden(n)).filter_map(|n| tools::describe(n)).collect()
    }
}

impl ServerHandler for Warden {
    #[allow(deprecated, reason = "logging: reload reports go out as logging notifications")]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_logging().build())
            .with_server_info(Implementation::new("warden", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "warden decides every call against its policy (allow, ask, deny), runs commands in a sandbox, \
                 and returns the deciding rule with each result. Use `explain` to see what a call would get.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // 2026-07-28 forbids server-to-client requests, and `ask` is settled by elicitation.
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    #[allow(deprecated, reason = "logging/setLevel: reload reports go out as logging notifications")]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        let mut peers = match self.shared.peers.lock() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        };
        peers.retain(|p| !p.is_transport_closed());
        peers.push(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.visible_tools()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let size = serde_json::to_vec(&args).map(|v| v.len()).unwrap_or(usize::MAX);
        if size > ARGUMENT_CAP {
            return Err(McpError::invalid_params(format!("the arguments are {size} bytes; the cap is {ARGUMENT_CAP}"), None));
        }
        if !tools::NAMES.contains(&name.as_str()) {
            return Err(McpError::invalid_params(format!("unknown tool `{name}`; the tools are {}", tools::NAMES.join(", ")), None));
        }
        if self.hidden(&name) {
            let x = self.shared.explain(Query::Tool { name: &name, path: None });
            let view = DecisionView::of(&x.decision);
            return Err(McpError::invalid_params(
                format!("the tool `{name}` is denied to this agent: {} ({})", view.reason, view.by()),
                None,
            ));
        }
        // The client cancels a call with `notifications/cancelled` (rmcp then fires `ct` and
        // drops the call's response), or by hanging up.
        // Over HTTP the connection is the session (`Mcp-Session-Id`), ended by a DELETE or
        // when idle; it is not idle while this call runs (`_calling`).
        let parts = context.extensions.get::<hyper::http::request::Parts>();
        let session = parts.and_then(|p| p.headers.get(crate::http::SESSION_ID)).and_then(|id| id.to_str().ok());
        let (hangup, _calling) = match session {
            Some(id) => {
                let (hangup, calling) = self.shared.sessions.call(id);
                (hangup, Some(calling))
            }
            None => (self.hangup.clone(), None),
        };
        // Who sent it over HTTP (set by `http::route`), named on each of its audit records.
        let from = parts.and_then(|p| p.extensions.get::<ClientRec>()).cloned();
        let stop = Stop { call: context.ct.clone(), hangup };
        let result = crate::call::dispatch(self, &name, args, &context.peer, stop, from).await?;
        Ok(result.into())
    }
}

/// What ends a call early: the client cancelled it, or the connection ended.
#[derive(Clone)]
pub(crate) struct Stop {
    call: CancellationToken,
    hangup: CancellationToken,
}

impl Stop {
    /// Resolves when the call is to stop.
    pub(crate) async fn stopped(&self) {
        tokio::select! {
            () = self.call.cancelled() => {}
            () = self.hangup.cancelled() => {}
        }
    }
}

/// A tool result: the text a model reads, the structured content, and whether it failed.
pub(crate) fn result(text: String, structured: &impl Serialize, failed: bool) -> CallToolResult {
    let mut r = if failed { CallToolResult::error(vec![ContentBlock::text(text)]) } else { CallToolResult::success(vec![ContentBlock::text(text)]) };
    r.structured_content = serde_json::to_value(structured).ok();
    r
}

/// A file tool's result from its decision, why it was refused (if it was) and its outcome.
pub(crate) fn file_result<T: Serialize>(
    tool: &str,
    x: &warden_engine::Explanation,
    refused: Option<String>,
    outcome: Option<Result<T, String>>,
    summary: impl FnOnce(&T) -> String,
) -> CallToolResult {
    let decision = DecisionView::of(&x.decision);
    let (ok, error, value) = match (refused, outcome) {
        (Some(why), _) => (false, Some(why), None),
        (None, Some(Ok(v))) => (true, None, Some(v)),
        (None, Some(Err(e))) => (false, Some(e), None),
        (None, None) => (false, Some("nothing was done".to_string()), None),
    };
    let text = match (&value, &error) {
        (Some(v), _) => summary(v),
        (None, Some(e)) => format!("{tool}: not done: {e} ({})", decision.by()),
        (None, None) => format!("{tool}: not done"),
    };
    let out = FileResult { decision, ok, error, result: value };
    result(text, &out, !ok)
}
