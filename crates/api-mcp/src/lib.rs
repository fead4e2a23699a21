//! The MCP server: every operation of the registry as a tool (tool name = operationId), with the same
//! input schema and the same code as its REST route, over Streamable HTTP at `/mcp`.
//!
//! Protocol versions: 2026-07-28 (stateless, per-request `_meta`, `server/discover`, `Mcp-Method` /
//! `Mcp-Name` checked against the body) and the initialize-based 2025-03-26, 2025-06-18 and 2025-11-25,
//! on one endpoint, stateless (no session lives in one process). 2024-11-05 and unknown versions are
//! refused as the spec says (rmcp does the wire work; [`SUPPORTED`] is the policy).
//!
//! Sign-in: [`guard`] runs before rmcp sees the request. It checks the bearer credential (an API key or
//! an OAuth access token whose audience is `/mcp`), answers 401 with `WWW-Authenticate: Bearer
//! resource_metadata=…, scope=…` when a tool that needs sign-in is called without one, and 403
//! `insufficient_scope` when the credential lacks the tool's scope, so MCP clients start (or step up)
//! the OAuth flow. The principal it found reaches the tool through the request's extensions.
//!
//! Architecture invariant: the only crate that knows MCP. Tools are generated from
//! `operations::registry()`, so a new operation becomes a tool without code here. Tool errors carry
//! the field and the problem as structured content a model can act on; only storage failures are
//! protocol errors.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderValue, WWW_AUTHENTICATE};
use actix_web::middleware::{Next, from_fn};
use actix_web::{HttpMessage, HttpResponse, ResponseError, web};
use api_http::ApiError;
use api_http::json::Unreadable;
use domain::user::Scope;
use operations::oauth::Audience;
use operations::{Caller, Ctx, Descriptor, OpError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use rmcp_actix_web::transport::{StreamableHttpService, on_request_extensions};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// What the server tells a client about itself.
const INSTRUCTIONS: &str = "launchdir is a product-launch directory. Read tools need no sign-in. Votes are cast only \
by people on the site: no tool votes. Paying happens on a checkout page a person opens: no tool takes card details.";

/// The protocol versions served, oldest first. rmcp also knows 2024-11-05; the spec does not list it.
pub const SUPPORTED: [ProtocolVersion; 4] = [
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// The caller of the HTTP request a tool call came in, put in the MCP request context by the
/// transport's `on_request` hook from what [`guard`] found.
#[derive(Clone, Debug)]
struct RequestCaller(Caller);

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
    // MCP wants an object schema at the top; an `allOf` of objects is one, so say so.
    obj.entry("type").or_insert_with(|| Value::String("object".into()));
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

/// Every operation as the MCP tool it is (before `tools/list` fills in today's reference lists).
pub fn tools() -> Vec<Tool> {
    operations::registry().iter().map(tool).collect()
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

    /// Serves one local client over stdin/stdout (`launchdir-mcp stdio`): the calls run as `ctx.caller`.
    pub async fn serve_stdio(self) -> anyhow::Result<()> {
        use rmcp::ServiceExt;
        let running = self.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        Ok(())
    }
}

impl ServerHandler for LaunchdirMcp {
    fn get_info(&self) -> ServerConfig {
        // Prompts and resources are declared, and listed empty: clients that ask for them (and cache the
        // lists) get a valid answer rather than an error; everything is a tool.
        InitializeResult::new(ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build())
            .with_server_info(Implementation::new("launchdir", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(&SUPPORTED)
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // Today's categories, interview questions and products, as the OpenAPI document has them.
        let sets = operations::refine::ReferenceSets::load(&self.ctx.app)
            .await
            .map_err(|e| McpError::internal_error(format!("reading the reference lists: {e}"), None))?;
        let tools = self.tools.iter().map(|(_, t)| {
            let mut t = t.clone();
            let mut schema = Value::Object((*t.input_schema).clone());
            sets.fill(&mut schema);
            if let Value::Object(o) = schema {
                t.input_schema = Arc::new(o);
            }
            t
        });
        Ok(ListToolsResult::with_all_items(tools.collect()))
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
            .map_or_else(|| self.ctx.caller.clone(), |c| c.0.clone());
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
                    "message": format!("{e}; sign in with OAuth or send an API key as Authorization: Bearer (LAUNCHDIR_API_KEY for stdio)"),
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
            Err(OpError::Conflict { code, message } | OpError::Upstream { code, message }) => {
                CallToolResult::structured_error(json!({"error": {"code": code, "message": message, "details": []}}))
            }
            Err(OpError::TooMany { code, message, retry_after_secs }) => {
                CallToolResult::structured_error(json!({"error": {
                    "code": code, "message": message, "details": [], "retry_after_seconds": retry_after_secs,
                }}))
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
/// load balancer can answer), behind [`guard`]. `allowed_hosts` are the Host values accepted
/// (DNS-rebinding protection); browsers' `Origin` must be the public URL's.
#[derive(Clone)]
pub struct Endpoint {
    service: StreamableHttpService<LaunchdirMcp, LocalSessionManager>,
    guard: web::Data<Guard>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").finish_non_exhaustive()
    }
}

/// What the guard checks credentials with, and where it sends a batch's messages.
#[derive(Debug, Clone)]
pub struct Guard {
    ctx: Ctx,
    scopes: Arc<HashMap<&'static str, Scope>>,
    batches: Batches,
}

/// rmcp's HTTP service with the endpoint's settings but answering in JSON, for the messages of a
/// JSON-RPC batch one at a time ([`answer_batch`]).
#[derive(Clone)]
struct Batches(Arc<rmcp::transport::streamable_http_server::StreamableHttpService<LaunchdirMcp, LocalSessionManager>>);

impl std::fmt::Debug for Batches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches").finish_non_exhaustive()
    }
}

/// The most messages a JSON-RPC batch may hold. Each counts against the rate limit.
pub const BATCH_MAX: usize = 10;

/// The protocol version whose clients may send batches (2025-06-18 removed them); its clients send
/// no `MCP-Protocol-Version` header.
const BATCH_VERSION: &str = "2025-03-26";

impl Endpoint {
    pub fn new(ctx: Ctx, allowed_hosts: Vec<String>) -> Self {
        let ctx = Ctx { audience: Audience::Mcp, caller: Caller::Anonymous, ..ctx };
        let origin = ctx.public_url.trim_end_matches('/').to_owned();
        let server = LaunchdirMcp::new(ctx.clone());
        let batches = {
            let server = server.clone();
            let config = rmcp::transport::streamable_http_server::StreamableHttpServerConfig::default()
                .with_legacy_session_mode(false)
                .with_json_response(true)
                .with_allowed_hosts(allowed_hosts.clone())
                .with_allowed_origins(vec![origin.clone()]);
            Batches(Arc::new(rmcp::transport::streamable_http_server::StreamableHttpService::new(
                move || Ok(server.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            )))
        };
        let service = StreamableHttpService::builder()
            .service_factory(Arc::new(move || Ok(server.clone())))
            .session_manager(Arc::new(LocalSessionManager::default()))
            .stateful_mode(false)
            .allowed_hosts(allowed_hosts)
            .allowed_origins(vec![origin])
            .on_request(Arc::new(|req: &actix_web::HttpRequest, ext: &mut rmcp::model::Extensions| {
                let caller = req.extensions().get::<RequestCaller>().map_or(Caller::Anonymous, |c| c.0.clone());
                ext.insert(RequestCaller(caller));
            }))
            .build();
        let scopes = operations::registry().into_iter().filter_map(|op| op.scope.map(|s| (op.id, s))).collect();
        Self { service, guard: web::Data::new(Guard { ctx, scopes: Arc::new(scopes), batches }) }
    }

    /// The endpoint mounted at `path` (normally `/mcp`).
    pub fn scope(self, path: &'static str) -> impl actix_web::dev::HttpServiceFactory + use<> {
        self.service.scope_with_path(path).app_data(self.guard).wrap(from_fn(guard))
    }
}

/// The challenge of a 401 or 403 on /mcp: where the protected resource metadata is (RFC 9728 §5.1)
/// and which scope the call needs.
fn challenge(ctx: &Ctx, error: ApiError, oauth_error: Option<&str>, scope: Option<Scope>) -> HttpResponse {
    let mut value = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
        ctx.public_url.trim_end_matches('/')
    );
    if let Some(e) = oauth_error {
        value.push_str(&format!(", error=\"{e}\""));
    }
    if let Some(s) = scope {
        value.push_str(&format!(", scope=\"{}\"", s.as_str()));
    }
    let mut r = error.error_response();
    if let Ok(v) = HeaderValue::from_str(&value) {
        r.headers_mut().insert(WWW_AUTHENTICATE, v);
    }
    r
}

/// The scopes the JSON-RPC message(s) in `body` need: those of the tools it calls (batches of the
/// 2025-03-26 revision included). Anything unreadable needs none here; rmcp answers it.
fn scopes_needed(body: &Value, scopes: &HashMap<&'static str, Scope>) -> Vec<Scope> {
    let messages = match body {
        Value::Array(a) => a.as_slice(),
        one => std::slice::from_ref(one),
    };
    let mut out: Vec<Scope> = messages
        .iter()
        .filter(|m| m.get("method").and_then(Value::as_str) == Some("tools/call"))
        .filter_map(|m| m.pointer("/params/name").and_then(Value::as_str))
        .filter_map(|name| scopes.get(name).copied())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Checks the credential of every /mcp request before rmcp sees it (rmcp-actix-web drops the
/// `Authorization` header): a bad credential is 401 `invalid_token`; a tool call that needs sign-in
/// without one is 401 with the scope; a credential without the tool's scope is 403
/// `insufficient_scope`. A good credential's principal travels on in the request's extensions.
pub async fn guard(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(g) = req.app_data::<web::Data<Guard>>().cloned() else {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    };
    let answer = |req: ServiceRequest, r: HttpResponse| Ok(ServiceResponse::new(req.into_parts().0, r));
    let principal = match api_http::caller_of(req.request()) {
        Caller::Anonymous => None,
        Caller::Malformed => {
            return answer(req, challenge(&g.ctx, ApiError::invalid_token(), Some("invalid_token"), None));
        }
        Caller::Bearer(raw) => match operations::authenticate(&g.ctx.app, &raw, Audience::Mcp).await {
            Ok(p) => Some(p),
            Err(OpError::InvalidToken) => {
                return answer(req, challenge(&g.ctx, ApiError::invalid_token(), Some("invalid_token"), None));
            }
            Err(e) => return answer(req, ApiError::from(e).error_response()),
        },
        Caller::Principal(p) => Some(p),
    };
    let mut batch = None;
    if req.method() == actix_web::http::Method::POST {
        let body = req.extract::<web::Bytes>().await?;
        // Read strictly before anything reads it: the scopes below and rmcp must see one message.
        let needed = match api_http::json::parse_strict(&body) {
            Err(Unreadable::Repeated(key)) => {
                let e = ApiError::from(domain::ValidationError::new(key, "given more than once"));
                return answer(req, e.error_response());
            }
            // rmcp answers what is not JSON, in JSON-RPC's terms.
            Err(Unreadable::Invalid(_)) => Vec::new(),
            Ok(message) => scopes_needed(&message, &g.scopes),
        };
        if body.trim_ascii_start().starts_with(b"[") {
            batch = Some(body);
        } else {
            req.set_payload(actix_web::dev::Payload::from(body));
        }
        match (&principal, needed.first()) {
            (None, Some(scope)) => {
                let e = ApiError::unauthenticated();
                return answer(req, challenge(&g.ctx, e, None, Some(*scope)));
            }
            (Some(p), _) => {
                if let Some(missing) = needed.iter().find(|s| !p.allows(**s)) {
                    let e = ApiError::insufficient_scope(missing.as_str());
                    return answer(req, challenge(&g.ctx, e, Some("insufficient_scope"), Some(*missing)));
                }
            }
            (None, None) => {}
        }
    }
    if let Some(body) = batch {
        let caller = principal.map_or(Caller::Anonymous, Caller::Principal);
        return answer_batch(req, &g.batches, &body, caller).await;
    }
    if let Some(p) = principal {
        req.extensions_mut().insert(RequestCaller(Caller::Principal(p)));
    }
    let sent_json = req.mime_type().ok().flatten().is_some_and(|m| m.essence_str() == "application/json");
    in_the_contract_shape(next.call(req).await?, sent_json).await
}

/// A JSON-RPC batch (protocol 2025-03-26, whose servers "MUST support receiving" them; rmcp refuses
/// them): each message goes to rmcp's service on its own, as a request of its own with this one's
/// headers and caller would, one after the other, and the answer is the JSON array of the responses
/// to its requests in order (none for a notification; 202 without a body when there are none). A
/// message rmcp cannot read is answered with JSON-RPC's invalid request (-32600). Refused whole, 400
/// naming `body`: a batch under a later protocol version (2025-06-18 removed them), an empty one, one
/// of more than [`BATCH_MAX`] messages. Each message past the first counts against the rate limit
/// too, so a batch buys no more calls than single requests.
async fn answer_batch(
    req: ServiceRequest,
    batches: &Batches,
    body: &[u8],
    caller: Caller,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    use http_body_util::BodyExt;
    let refuse = |req: ServiceRequest, problem: String| {
        let e = ApiError::from(domain::ValidationError::new("body", problem));
        Ok(ServiceResponse::new(req.into_parts().0, e.error_response()))
    };
    let version = req.headers().get("mcp-protocol-version").map(|v| v.to_str().unwrap_or_default().to_owned());
    if version.as_deref().is_some_and(|v| v != BATCH_VERSION) {
        return refuse(
            req,
            format!("is a JSON-RPC batch, which only protocol {BATCH_VERSION} has: send one message per request"),
        );
    }
    let messages = match serde_json::from_slice::<Vec<Value>>(body) {
        Ok(m) if m.is_empty() => return refuse(req, "is an empty JSON-RPC batch".into()),
        Ok(m) if m.len() > BATCH_MAX => {
            return refuse(req, format!("is a JSON-RPC batch of {} messages; at most {BATCH_MAX}", m.len()));
        }
        Ok(m) => m,
        Err(e) => return refuse(req, format!("is not a JSON-RPC batch: {e}")),
    };
    if let Err(too_many) = api_http::middleware::count_more(&req, messages.len() - 1).await {
        return Ok(ServiceResponse::new(req.into_parts().0, too_many));
    }
    let mut answers = Vec::new();
    for message in &messages {
        let mut one = http::Request::builder().method(http::Method::POST).uri(req.uri().to_string());
        for (name, value) in req.headers() {
            // The credential was checked above and travels as the caller; the length is the batch's.
            if matches!(name.as_str(), "authorization" | "content-length" | "transfer-encoding") {
                continue;
            }
            one = one.header(name.as_str(), value.as_bytes());
        }
        let mut extensions = rmcp::model::Extensions::new();
        extensions.insert(RequestCaller(caller.clone()));
        let one = one
            .extension(extensions)
            .body(http_body_util::Full::new(web::Bytes::from(message.to_string())))
            .map_err(|e| ApiError::from(domain::ValidationError::new("headers", e.to_string())))?;
        let response = batches.0.handle(one).await;
        if response.status() == http::StatusCode::ACCEPTED {
            continue;
        }
        let bytes = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(answer) if answer.get("jsonrpc").is_some() => answers.push(answer),
            _ => answers.push(json!({
                "jsonrpc": "2.0",
                "id": message.get("id").cloned().unwrap_or(Value::Null),
                "error": {"code": -32600, "message": format!("invalid request: {}", String::from_utf8_lossy(&bytes).trim())},
            })),
        }
    }
    let response = if answers.is_empty() {
        HttpResponse::Accepted().finish()
    } else {
        HttpResponse::Ok().json(Value::Array(answers))
    };
    Ok(ServiceResponse::new(req.into_parts().0, response))
}

/// rmcp's own answers to what is not a JSON-RPC message over Streamable HTTP (a wrong method, content
/// type or `Accept`, a foreign Host, an unknown protocol version, a body it cannot read) are plain
/// text; they become the CONTRACT's error shape here, with the status kept but for one: rmcp answers a
/// body sent as `application/json` that is not a JSON-RPC message 415, where the media type was
/// right and the body wrong, so that is a 400 naming `body`. Its JSON-RPC errors (`application/json`)
/// and every success pass as they are.
async fn in_the_contract_shape(
    res: ServiceResponse<impl MessageBody + 'static>,
    sent_json: bool,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let status = res.status();
    let is_json = res.response().headers().get(actix_web::http::header::CONTENT_TYPE).is_some_and(|v| {
        v.to_str()
            .is_ok_and(|v| v.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case("application/json"))
    });
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return Ok(res.map_into_boxed_body());
    }
    let allow = res.response().headers().get(actix_web::http::header::ALLOW).cloned();
    let (req, response) = res.into_parts();
    // rmcp's error bodies are a line of text: up to 4 KiB is read, a longer one left out.
    let text = match actix_web::body::to_bytes_limited(response.into_body(), 4_096).await {
        Ok(Ok(b)) => String::from_utf8_lossy(&b).into_owned(),
        _ => String::new(),
    };
    let error = transport_error(status, sent_json, text.trim());
    let mut out = error.error_response();
    if let Some(a) = allow {
        out.headers_mut().insert(actix_web::http::header::ALLOW, a);
    }
    Ok(ServiceResponse::new(req, out))
}

/// The [`ApiError`] of rmcp's plain-text answer `text` with `status` (see [`in_the_contract_shape`]).
fn transport_error(status: actix_web::http::StatusCode, sent_json: bool, text: &str) -> ApiError {
    use actix_web::http::StatusCode as S;
    let field = |field: &str, problem: String| ApiError::from(domain::ValidationError::new(field, problem));
    match status {
        S::UNSUPPORTED_MEDIA_TYPE if sent_json => {
            let why = text.strip_prefix("fail to deserialize request body").unwrap_or(text).trim();
            field("body", format!("is not a JSON-RPC 2.0 request, notification or response: {why}"))
        }
        S::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            status,
            "unsupported_media_type",
            "send the body as application/json (Content-Type: application/json)",
        ),
        S::NOT_ACCEPTABLE => ApiError::new(
            status,
            "not_acceptable",
            "send Accept: application/json, text/event-stream (a Streamable HTTP client takes either)",
        ),
        S::METHOD_NOT_ALLOWED => ApiError::new(
            status,
            "method_not_allowed",
            "this endpoint takes JSON-RPC messages by POST (it is stateless: there is no stream to GET or session to DELETE)",
        ),
        S::BAD_REQUEST => {
            let why = text.strip_prefix("Bad Request:").unwrap_or(text).trim();
            let header = if why.contains("MCP-Protocol-Version") { "MCP-Protocol-Version" } else { "Host" };
            field(header, why.to_owned())
        }
        S::FORBIDDEN => ApiError::new(status, "forbidden", text.strip_prefix("Forbidden:").unwrap_or(text).trim()),
        S::PAYLOAD_TOO_LARGE => ApiError::payload_too_large(api_http::middleware::BODY_LIMIT),
        s if s.is_server_error() => {
            tracing::error!(status = s.as_u16(), text, "the MCP transport failed");
            ApiError::internal()
        }
        s => ApiError::new(s, "invalid_request", text.to_owned()),
    }
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
