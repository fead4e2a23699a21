//! One description of each API operation (spec operationId): its method and path, its scope, its input
//! type with bounds and JSON Schema, its output type, and the code that runs it. The REST routes, the
//! OpenAPI 3.1 document and (later) the MCP tools are all generated from [`registry`], so a bound
//! cannot differ between them.
//!
//! Architecture invariant: knows neither HTTP nor MCP. It receives inputs as JSON values (REST builds
//! them from path, query and body; MCP from tool arguments) and returns JSON values or an [`OpError`].

pub mod account;
pub mod accounts;
pub mod admin;
pub mod app;
pub mod badges;
pub mod cache;
pub mod claims;
pub mod drafts;
pub mod engagement;
pub mod idempotency;
mod input;
pub mod invites;
mod json;
pub mod keys;
pub mod lifecycle;
pub mod logos;
pub mod moderation;
pub mod oauth;
pub mod openapi;
pub mod orders;
pub mod own;
pub mod public;
mod quotas;
pub mod reference;
pub mod refine;
pub mod sitemap;
pub mod worker;

pub use app::{App, KeySource, Ports};

use async_trait::async_trait;
use domain::ValidationErrors;
use domain::ports::RepoError;
use domain::user::Scope;
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use utoipa::{PartialSchema, ToSchema};

pub use cache::ReadCache;
pub use input::{coerce_strings, objects_are_objects, parse_input};

/// The most room an answer's JSON is given before it is written: the size of an operation's last
/// answer, up to this (larger answers grow from it as they are written).
const MOST_ROOM: usize = 64 * 1024;

/// HTTP method of an operation (MCP ignores it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::Post => "post",
            Self::Put => "put",
            Self::Patch => "patch",
            Self::Delete => "delete",
        }
    }

    /// Whether inputs other than path parameters come in the query string (else in a JSON body).
    pub fn takes_query(self) -> bool {
        matches!(self, Self::Get | Self::Delete)
    }
}

/// What an operation runs with: the application and the links it hands out.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub app: crate::App,
    /// Base of every link, without a trailing slash.
    pub public_url: String,
    /// Results of public reads, shared by REST and MCP.
    pub reads: ReadCache,
    /// Who is calling: set per request, before the operation runs.
    pub caller: Caller,
    /// Requests per minute per client (LAUNCHDIR_RATE_LIMIT), as get_account reports it.
    pub rate_limit_per_minute: u32,
    /// The request's Idempotency-Key header, if any (used by the operations that accept one).
    pub idempotency_key: Option<String>,
    /// The surface the request came through: OAuth access tokens must be meant for it (their `aud`).
    pub audience: oauth::Audience,
}

/// The credential a request came with, and after [`Descriptor::call`] checked it, who it belongs to.
#[derive(Debug, Clone, Default)]
pub enum Caller {
    #[default]
    Anonymous,
    /// `Authorization: Bearer …` as received, not yet checked.
    Bearer(String),
    /// An `Authorization` header that is not a bearer credential.
    Malformed,
    /// Signed in (checked by `call`, or a session on the service's own pages).
    Principal(domain::auth::Principal),
}

impl Ctx {
    /// The signed-in caller; operations with a scope always have one (`call` checked it).
    pub fn principal(&self) -> OpResult<&domain::auth::Principal> {
        match &self.caller {
            Caller::Principal(p) => Ok(p),
            _ => Err(OpError::Unauthenticated),
        }
    }

    /// This context for another caller.
    pub fn with_caller(&self, caller: Caller) -> Self {
        Self { caller, ..self.clone() }
    }
}

/// Why an operation failed. The API crates map these to statuses and tool errors.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// 400: each offending field named.
    #[error("invalid request: {0}")]
    Invalid(ValidationErrors),
    /// 404: the named thing (a listing, a week, a board …) does not exist or is not the caller's.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// 401: the operation needs sign-in and the request carried no credential.
    #[error("sign-in required")]
    Unauthenticated,
    /// 401: the credential is malformed, unknown, revoked or expired.
    #[error("the credential is not valid")]
    InvalidToken,
    /// 403: signed in, but the access lacks this scope.
    #[error("the access lacks the scope {}", .0.as_str())]
    Forbidden(Scope),
    /// 409: the first request with this Idempotency-Key is still running.
    #[error("a request with this Idempotency-Key is still running; retry in a moment")]
    IdempotencyInFlight,
    /// 409: the record's state does not allow this now (a draft still being drafted …).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// 429: a quota of the caller's is spent (crawls a day, …); try again after `retry_after_secs`.
    #[error("{message}")]
    TooMany { code: &'static str, message: String, retry_after_secs: u64 },
    /// 502: a provider we depend on (the payment gateway) failed or did not answer; nothing was
    /// changed, and the same request can be tried again.
    #[error("{message}")]
    Upstream { code: &'static str, message: String },
    /// 422: this Idempotency-Key was used with a different request.
    #[error("this Idempotency-Key was used with a different request")]
    IdempotencyMismatch,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

impl From<ValidationErrors> for OpError {
    fn from(e: ValidationErrors) -> Self {
        Self::Invalid(e)
    }
}

impl From<domain::ValidationError> for OpError {
    fn from(e: domain::ValidationError) -> Self {
        Self::Invalid(e.into())
    }
}

pub type OpResult<T> = Result<T, OpError>;

/// One operation of the spec. Implemented once per operationId; registered in [`registry`].
#[async_trait]
pub trait Operation: Send + Sync + 'static {
    /// The operationId, also the MCP tool name.
    const ID: &'static str;
    const METHOD: Method;
    /// Path under `/api/v1`, with `{name}` parameters named as in the input type.
    const PATH: &'static str;
    /// `None` for public operations.
    const SCOPE: Option<Scope>;
    /// 200 or 201.
    const STATUS: u16 = 200;
    /// Reads only (MCP read-only hint; safe to retry).
    const READ_ONLY: bool = true;
    /// Accepts the Idempotency-Key header (the spec lists which operations do).
    const IDEMPOTENCY_KEY: bool = false;
    /// Answers 404 for an unknown record named outside the path (a slug or id in the query or body);
    /// operations with path parameters always may.
    const NOT_FOUND: bool = false;
    const SUMMARY: &'static str;
    /// Written for a person and a model: what it does, what it never does, what comes next.
    const DESCRIPTION: &'static str;

    /// All inputs in one flat object: path parameters, query parameters and body fields.
    type Input: DeserializeOwned + ToSchema + Send;
    type Output: Serialize + ToSchema + Send;

    async fn run(ctx: &Ctx, input: Self::Input) -> OpResult<Self::Output>;

    /// Adds to the input's JSON Schema what its Rust type cannot say: a rule between fields (an `if` /
    /// `then`), or a `oneOf` of item shapes. The REST body and the MCP tool get the same schema.
    fn refine_input_schema(_schema: &mut serde_json::Value) {}
}

/// An erased operation: JSON input in, the output serialized out (straight from its Rust type: building a
/// `serde_json::Value` first cost allocations on every uncached read, measured in docs/BENCHMARKS.md).
type Call = Arc<dyn Fn(Ctx, serde_json::Value) -> BoxFuture<'static, OpResult<bytes::Bytes>> + Send + Sync>;

/// An operation with its types erased, for the generators.
#[derive(Clone)]
pub struct Descriptor {
    pub id: &'static str,
    pub method: Method,
    pub path: &'static str,
    pub scope: Option<Scope>,
    pub status: u16,
    pub read_only: bool,
    pub idempotency_key: bool,
    /// May answer 404 (see [`Operation::NOT_FOUND`]).
    pub not_found: bool,
    pub summary: &'static str,
    pub description: &'static str,
    /// JSON Schema of the whole input object (inline, no references).
    pub input_schema: serde_json::Value,
    /// JSON Schema of the output, and the component schemas it refers to.
    pub output_schema: serde_json::Value,
    pub output_components: Vec<(String, serde_json::Value)>,
    call: Call,
}

impl std::fmt::Debug for Descriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Descriptor").field("id", &self.id).field("path", &self.path).finish_non_exhaustive()
    }
}

impl Descriptor {
    pub fn of<O: Operation>() -> Self {
        let mut components = Vec::new();
        O::Output::schemas(&mut components);
        let mut input_schema = to_json(&O::Input::schema());
        refine::common_bounds(&mut input_schema);
        O::refine_input_schema(&mut input_schema);
        let input_shape = Arc::new(input_schema.clone());
        let last_size = Arc::new(AtomicUsize::new(0));
        Self {
            id: O::ID,
            method: O::METHOD,
            path: O::PATH,
            scope: O::SCOPE,
            status: O::STATUS,
            read_only: O::READ_ONLY,
            idempotency_key: O::IDEMPOTENCY_KEY,
            not_found: O::NOT_FOUND || O::PATH.contains('{'),
            summary: O::SUMMARY,
            description: O::DESCRIPTION,
            input_schema,
            output_schema: to_json(&O::Output::schema()),
            output_components: components.into_iter().map(|(n, s)| (n, to_json(&s))).collect(),
            call: Arc::new(move |ctx, value| {
                let (shape, last_size) = (input_shape.clone(), last_size.clone());
                Box::pin(async move {
                    objects_are_objects(&shape, &value, "")?;
                    let input: O::Input = parse_input(value)?;
                    let out = O::run(&ctx, input).await?;
                    // Written into room for the operation's last answer: from serde_json's 128 bytes, a
                    // page of 20 listings (5–7 KB) was copied into a buffer twice as big six times over.
                    let mut json = Vec::with_capacity(last_size.load(Ordering::Relaxed).clamp(128, MOST_ROOM));
                    if json::write(&mut json, &out).is_err() {
                        // A value it leaves to serde_json (or an error serde_json words its own way).
                        json.clear();
                        serde_json::to_writer(&mut json, &out)
                            .map_err(|e| OpError::Repo(RepoError::Unexpected(Box::new(e))))?;
                    }
                    #[cfg(debug_assertions)]
                    if let Ok(theirs) = serde_json::to_vec(&out) {
                        assert!(
                            json == theirs,
                            "{}'s answer differs from serde_json's:\n{}\n{}",
                            O::ID,
                            String::from_utf8_lossy(&json),
                            String::from_utf8_lossy(&theirs)
                        );
                    }
                    last_size.store(json.len(), Ordering::Relaxed);
                    // The read cache keeps answers as they are: no more than an eighth of one unused.
                    if json.capacity() - json.len() > json.len() / 8 {
                        json.shrink_to_fit();
                    }
                    Ok(bytes::Bytes::from(json))
                })
            }),
        }
    }

    /// Runs the operation on a JSON object of inputs. Public reads go through the read cache (keyed by
    /// operation and input); a successful write empties it.
    pub async fn call(&self, ctx: Ctx, input: serde_json::Value) -> OpResult<serde_json::Value> {
        self.call_replayable(ctx, input).await.map(|(v, _)| v)
    }

    /// As [`Descriptor::call`], also saying whether the response is the replay of an earlier request
    /// with the same Idempotency-Key.
    pub async fn call_replayable(&self, ctx: Ctx, input: serde_json::Value) -> OpResult<(serde_json::Value, bool)> {
        let (json, replayed) = self.call_json(ctx, input).await?;
        let v = serde_json::from_slice(&json).map_err(|e| OpError::Repo(RepoError::Unexpected(Box::new(e))))?;
        Ok((v, replayed))
    }

    /// As [`Descriptor::call_replayable`], the result serialized: what REST sends. A cached public read
    /// is answered with the stored bytes as they are.
    pub async fn call_json(&self, ctx: Ctx, input: serde_json::Value) -> OpResult<(bytes::Bytes, bool)> {
        let ctx = self.authorize(ctx).await?;
        if let (true, Some(key)) = (self.idempotency_key, ctx.idempotency_key.clone()) {
            return idempotency::run_once(self, ctx, key, input).await;
        }
        if self.read_only && self.scope.is_none() && ctx.reads.is_enabled() {
            // The UTC date is part of the key: "this week" and "today" change meaning at midnight.
            let key = format!("{}\u{0}{}\u{0}{input}", ctx.app.clock.now().date_naive(), self.id);
            let reads = ctx.reads.clone();
            return reads.get_or_bytes(key, (self.call)(ctx, input)).await.map(|j| (j, false));
        }
        Ok((self.run(ctx, input).await?, false))
    }

    /// The erased operation itself, for the idempotency wrapper.
    pub(crate) fn call_fn(&self) -> Call {
        self.call.clone()
    }

    /// Runs the operation uncached; a successful write empties the read caches (see
    /// [`public_data_changed`]). A write runs to its end in a task of its own ([`to_the_end`]).
    async fn run(&self, ctx: Ctx, input: serde_json::Value) -> OpResult<bytes::Bytes> {
        if self.read_only {
            return (self.call)(ctx, input).await;
        }
        let (app, reads, call) = (ctx.app.clone(), ctx.reads.clone(), self.call.clone());
        to_the_end(app, reads, call(ctx, input)).await
    }

    /// The one authorization check (see [`authorize`]), driven by the declared scope.
    async fn authorize(&self, ctx: Ctx) -> OpResult<Ctx> {
        authorize(self.scope, ctx).await
    }

    /// Names of the `{parameters}` in the path.
    pub fn path_params(&self) -> Vec<&'static str> {
        self.path.split('/').filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}'))).collect()
    }
}

/// The one authorization check, driven by the declared scope: a credential, when present, must be
/// valid (also on public operations); a scoped operation needs a caller holding its scope.
async fn authorize(scope: Option<Scope>, ctx: Ctx) -> OpResult<Ctx> {
    let caller = match &ctx.caller {
        Caller::Anonymous => None,
        Caller::Malformed => return Err(OpError::InvalidToken),
        Caller::Bearer(raw) => Some(authenticate(&ctx.app, raw, ctx.audience).await?),
        Caller::Principal(p) => Some(p.clone()),
    };
    match (scope, &caller) {
        (Some(_), None) => return Err(OpError::Unauthenticated),
        (Some(scope), Some(p)) if !p.allows(scope) => return Err(OpError::Forbidden(scope)),
        _ => {}
    }
    Ok(match caller {
        Some(p) => ctx.with_caller(Caller::Principal(p)),
        None => ctx,
    })
}

/// Runs operation `O` on a typed input and answers its typed output: the service's own pages call
/// operations this way, so a renamed output field is a compile error, not a blank page. The same
/// authorization as [`Descriptor::call`]; a successful write empties the read caches. Not kept in
/// the read cache itself (a page keeps what it renders).
pub async fn invoke<O: Operation>(ctx: &Ctx, input: O::Input) -> OpResult<O::Output>
where
    O::Input: 'static,
    O::Output: 'static,
{
    let ctx = authorize(O::SCOPE, ctx.clone()).await?;
    if O::READ_ONLY {
        return O::run(&ctx, input).await;
    }
    let (app, reads) = (ctx.app.clone(), ctx.reads.clone());
    to_the_end(app, reads, async move { O::run(&ctx, input).await }).await
}

/// Runs a write in a task of its own, and once it succeeded empties the read caches (see
/// [`public_data_changed`]), and waits for both: whoever dropped the wait — a client that hung up, an
/// MCP client's cancellation, a caller's timeout — the write still runs to its end. A write is several
/// steps (a draft and the job that reads its site; a verified claim and the mail that tells the
/// listing's other owners; a change and the read caches it empties), and a future dropped between two
/// of them left the first without the second: a draft never read, owners never told.
pub async fn to_the_end<T: Send + 'static>(
    app: crate::App,
    reads: ReadCache,
    write: impl std::future::Future<Output = OpResult<T>> + Send + 'static,
) -> OpResult<T> {
    let task = tokio::spawn(async move {
        let out = write.await;
        if out.is_ok() {
            public_data_changed(&app, &reads).await;
        }
        out
    });
    task.await.unwrap_or_else(|e| Err(OpError::Repo(RepoError::Unexpected(Box::new(e)))))
}

/// The caller behind a bearer credential: an OAuth access token meant for `audience`, or an API key
/// (which works on every surface).
pub async fn authenticate(
    app: &crate::App,
    credential: &str,
    audience: oauth::Audience,
) -> OpResult<domain::auth::Principal> {
    if oauth::looks_like_access_token(credential) {
        oauth::authenticate_access_token(app, credential, audience).await
    } else {
        accounts::authenticate_bearer(app, credential).await
    }
}

/// Public data changed (a write succeeded, a job or an operator's command changed listings): empties
/// this instance's caches at once and counts the change in the shared counter that every instance's
/// [`ReadCache::follow_changes`] polls. Failing to count is logged, not returned: the write itself
/// succeeded, and the other instances' entries still end with their TTL.
pub async fn public_data_changed(app: &crate::App, reads: &ReadCache) {
    public_change(app, reads, &cache::Change::Everything).await;
}

/// As [`public_data_changed`] for a change whose reach is known: this instance drops what it touched
/// at once, and the other instances read its scope beside the shared counter and drop the same.
pub async fn public_change(app: &crate::App, reads: &ReadCache, change: &cache::Change) {
    reads.forget(change);
    app.store.forget_cached();
    match app.store.note_public_change(&change.scope()).await {
        Ok(counter) => reads.saw_own_change(counter),
        Err(e) => tracing::warn!(error = %e, "counting a public change failed; other instances catch up by TTL"),
    }
}

/// utoipa's schema objects are plain serde types; they serialize to JSON Schema.
fn to_json<T: Serialize>(schema: &T) -> serde_json::Value {
    serde_json::to_value(schema).unwrap_or_default()
}

/// Every operation implemented so far, in the spec's order.
pub fn registry() -> Vec<Descriptor> {
    let mut all = public::descriptors();
    all.extend(account::descriptors());
    all.extend(drafts::descriptors());
    all.extend(own::descriptors());
    all.extend(claims::descriptors());
    all.extend(orders::descriptors());
    all
}
