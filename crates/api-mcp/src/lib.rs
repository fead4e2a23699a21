//! The MCP server: every operation of the registry as a tool (tool name = operationId), with the same
//! input schema and the same code as its REST route, over Streamable HTTP at `/mcp`.
//!
//! Status: tools for every operation implemented so far, stateless Streamable HTTP, protocol versions as
//! rmcp negotiates them. Tools that need sign-in accept an API key as `Authorization: Bearer` on the
//! HTTP request (read by our `on_request` hook and checked by `Descriptor::call`, never forwarded
//! anywhere). OAuth 2.1, the 401 challenge with `resource_metadata`, the version policy of the spec and
//! stdio come with the MCP issue.
//!
//! Architecture invariant: the only crate that knows MCP. Tools are generated from
//! `operations::registry()`, so a new operation becomes a tool without code here. Tool errors carry
//! the field and the problem as structured content a model can act on; only storage failures are
//! protocol errors.

use operations::{Ctx, Descriptor, OpError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use rmcp_actix_web::transport::{StreamableHttpService, on_request_extensions};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// What the server tells a client about itself.
const INSTRUCTIONS: &str = "launchdir is a product-launch directory. Read tools need no sign-in. Votes are cast only \
by people on the site: no tool votes. Paying happens on a checkout page a person opens: no tool takes card details.";

/// The credential of the HTTP request a tool call came in, put in the MCP request context by the
/// transport's `on_request` hook.
#[derive(Clone, Debug)]
struct RequestCaller(operations::Caller);

#[derive(Clone)]
pub struct LaunchdirMcp {
    ctx: Ctx,
    tools: Arc<Vec<(Descriptor, Tool)>>,
}

impl std::fmt::Debug for LaunchdirMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaunchdirMcp").field("tools", &self.tools.len()).finish()
    }
}

/// A JSON Schema that stands alone: component references become `$defs` references.
fn self_contained(schema: &Value, components: &[(String, Value)]) -> Map<String, Value> {
    let text = schema.to_string().replace("#/components/schemas/", "#/$defs/");
    let mut obj = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    if !components.is_empty() {
        let defs: Map<String, Value> = components
            .iter()
            .map(|(n, s)| {
                (
                    n.clone(),
                    serde_json::from_str(&s.to_string().replace("#/components/schemas/", "#/$defs/"))
                        .unwrap_or(Value::Null),
                )
            })
            .collect();
        obj.insert("$defs".into(), Value::Object(defs));
    }
    obj
}

/// The tool for one operation.
pub fn tool(op: &Descriptor) -> Tool {
    let input = match &op.input_schema {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    let annotations = ToolAnnotations::from_raw(
        Some(op.summary.to_owned()),
        Some(op.read_only),
        Some(false),
        Some(op.read_only),
        Some(false),
    );
    Tool::new(op.id, op.description, Arc::new(input))
        .with_title(op.summary)
        .with_raw_output_schema(Arc::new(self_contained(&op.output_schema, &op.output_components)))
        .with_annotations(annotations)
}

impl LaunchdirMcp {
    pub fn new(ctx: Ctx) -> Self {
        let tools = operations::registry().into_iter().map(|op| {
            let t = tool(&op);
            (op, t)
        });
        Self { ctx, tools: Arc::new(tools.collect()) }
    }

    pub fn tool_names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|(op, _)| op.id).collect()
    }
}

impl ServerHandler for LaunchdirMcp {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("launchdir", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.iter().map(|(_, t)| t.clone()).collect()))
    }

    async fn call_tool(
        &self,
        req: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some((op, _)) = self.tools.iter().find(|(op, _)| op.id == req.name) else {
            return Err(McpError::invalid_params(format!("unknown tool {:?}", req.name), None));
        };
        let args = Value::Object(req.arguments.unwrap_or_default());
        let caller = on_request_extensions(&context.extensions)
            .and_then(|e| e.get::<RequestCaller>())
            .map(|c| c.0.clone())
            .unwrap_or_default();
        let result = match op.call(self.ctx.with_caller(caller), args).await {
            Ok(v) => CallToolResult::structured(v),
            Err(OpError::Invalid(errs)) => CallToolResult::structured_error(json!({"error": {
                "code": "invalid_request",
                "message": errs.to_string(),
                "details": errs.0.iter().map(|e| json!({"field": e.field, "problem": e.problem})).collect::<Vec<_>>(),
            }})),
            Err(OpError::NotFound(what)) => CallToolResult::structured_error(json!({"error": {
                "code": "not_found",
                "message": format!("{what} not found"),
                "details": [],
            }})),
            Err(e @ (OpError::Unauthenticated | OpError::InvalidToken | OpError::Forbidden(_))) => {
                let code = match e {
                    OpError::Unauthenticated => "unauthenticated",
                    OpError::InvalidToken => "invalid_token",
                    _ => "insufficient_scope",
                };
                CallToolResult::structured_error(json!({"error": {
                    "code": code,
                    "message": format!("{e}; send an API key as Authorization: Bearer on the /mcp request"),
                    "details": [],
                }}))
            }
            Err(e @ (OpError::IdempotencyInFlight | OpError::IdempotencyMismatch)) => {
                CallToolResult::structured_error(json!({"error": {
                    "code": if matches!(e, OpError::IdempotencyInFlight) { "idempotency_key_in_flight" } else { "idempotency_key_reused" },
                    "message": e.to_string(),
                    "details": [],
                }}))
            }
            Err(OpError::Conflict { code, message }) => {
                CallToolResult::structured_error(json!({"error": {"code": code, "message": message, "details": []}}))
            }
            Err(OpError::Repo(e)) => {
                tracing::error!(error = %e, tool = op.id, "tool failed in storage");
                return Err(McpError::internal_error("storage failed; it has been logged", None));
            }
        };
        Ok(result.into())
    }
}

/// The Streamable HTTP service, stateless (no session lives in one process, so any instance behind a
/// load balancer can answer). `allowed_hosts` are the Host values accepted (DNS-rebinding protection).
pub fn http_service(ctx: Ctx, allowed_hosts: Vec<String>) -> StreamableHttpService<LaunchdirMcp, LocalSessionManager> {
    let server = LaunchdirMcp::new(ctx);
    StreamableHttpService::builder()
        .service_factory(Arc::new(move || Ok(server.clone())))
        .session_manager(Arc::new(LocalSessionManager::default()))
        .stateful_mode(false)
        .allowed_hosts(allowed_hosts)
        .on_request(Arc::new(|req: &actix_web::HttpRequest, ext: &mut rmcp::model::Extensions| {
            ext.insert(RequestCaller(api_http::caller_of(req)));
        }))
        .build()
}

/// The Host values the service answers to: the public URL's authority and the bound address.
pub fn allowed_hosts(public_url: &str, bound: &str) -> Vec<String> {
    let authority =
        public_url.split("://").nth(1).unwrap_or(public_url).split('/').next().unwrap_or_default().to_owned();
    let mut hosts = vec![authority.clone(), bound.to_owned()];
    if let Some((host, _)) = authority.rsplit_once(':') {
        hosts.push(host.to_owned());
    }
    hosts.sort();
    hosts.dedup();
    hosts.retain(|h| !h.is_empty());
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_from_the_public_url() {
        assert_eq!(allowed_hosts("https://launch.example", "0.0.0.0:8080"), vec!["0.0.0.0:8080", "launch.example"]);
        assert_eq!(allowed_hosts("http://127.0.0.1:9000/", "127.0.0.1:9000"), vec!["127.0.0.1", "127.0.0.1:9000"]);
    }

    #[test]
    fn every_operation_is_a_tool_with_a_standalone_output_schema() {
        for op in operations::registry() {
            let t = tool(&op);
            assert_eq!(t.name, op.id);
            let out = serde_json::to_string(&t.output_schema).unwrap_or_default();
            assert!(!out.contains("#/components/"), "{}: output schema refers outside itself", op.id);
        }
    }
}
