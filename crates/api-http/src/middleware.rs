//! Cross-cutting HTTP behaviour: one structured log line per request, the 1 MiB body limit answered
//! with 413 before a handler reads anything, the rate limit, and HEAD answered as GET.

use crate::error::ApiError;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::CONTENT_LENGTH;
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, ResponseError};
use std::time::Instant;

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 1024 * 1024;

pub async fn log_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    // Nothing is read or copied for a line the filter drops (`RUST_LOG=warn`).
    if !tracing::enabled!(tracing::Level::INFO) {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    }
    let started = Instant::now();
    // Both are shared, not copied: a standard method is a tag, a URI's parts count references.
    let method = req.method().clone();
    let uri = req.uri().clone();
    let res = next.call(req).await;
    let us = started.elapsed().as_micros() as u64;
    let path = redacted(uri.path());
    match &res {
        Ok(r) => tracing::info!(%method, %path, status = r.status().as_u16(), us, "request"),
        Err(e) => tracing::info!(%method, %path, status = e.as_response_error().status_code().as_u16(), us, "request"),
    }
    res.map(ServiceResponse::map_into_boxed_body)
}

/// Marks a request that came as HEAD and is served as GET ([`head_as_get`]): a handler with a side
/// effect a reader causes (a listing page's view) leaves it out where this is set.
#[derive(Debug, Clone, Copy)]
pub struct Head;

/// Whether `req` came as HEAD ([`head_as_get`]).
pub fn is_head(req: &actix_web::HttpRequest) -> bool {
    req.extensions().contains::<Head>()
}

/// Serves HEAD as GET: RFC 9110 §9.3.2 asks every resource that answers GET to answer HEAD with the
/// same status and header fields and no body, and uptime monitors, link checkers and `curl -I` send
/// it. actix-web routes HEAD to no GET handler, so without this every page and probe answered it 405.
/// The method is changed before routing, and the request marked [`Head`]; the body is left out by
/// the HTTP/1 and HTTP/2 writers, which read the method from the request as it arrived (the log
/// line, written outside this, says HEAD too). A resource that does not answer GET still answers a
/// HEAD 405.
pub async fn head_as_get(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    if req.method() == actix_web::http::Method::HEAD {
        req.head_mut().method = actix_web::http::Method::GET;
        req.extensions_mut().insert(Head);
    }
    next.call(req).await
}

/// Paths whose next segment is a secret (an emailed claim, invite, verification or password-reset
/// token, an OAuth request being resumed): logged as `[redacted]`, so request logs never hold a link
/// that works.
const SECRET_SEGMENT_AFTER: [&str; 5] =
    ["/claims/confirm/", "/invites/", "/oauth/resume/", "/verify-email/", "/reset-password/"];

/// `path` as the request log writes it.
pub fn redacted(path: &str) -> std::borrow::Cow<'_, str> {
    for prefix in SECRET_SEGMENT_AFTER {
        if let Some(rest) = path.strip_prefix(prefix) {
            let tail = rest.find('/').map_or("", |i| &rest[i..]);
            return format!("{prefix}[redacted]{tail}").into();
        }
    }
    path.into()
}

/// How long a body may take to arrive where no [`Limits`] say otherwise: `serve`'s default
/// (`LAUNCHDIR_BODY_TIMEOUT_SECS`), checked equal in launchdir-api's tests.
pub const DEFAULT_BODY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Refuses a declared body over [`BODY_LIMIT`], a body in a content coding (415, see [`encoded`]), and
/// a body that has not arrived within the deadline
/// ([`Limits::body_deadline`]) after the request's head. A body without a length (chunked) is counted as
/// it arrives and cut past [`BODY_LIMIT`]: a 413 in the CONTRACT's shape, whichever extractor read it
/// (the payload extractors' own answer to it was plain text).
///
/// A late body is answered 408 (`request_timeout`, the field `body`) and its connection closed,
/// whatever the handler made of the cut-off body. Without the deadline, a client that sent a head and
/// then a byte now and then held its connection and its handler for as long as it liked: actix-web
/// bounds the time to send a head (5 s), not a body.
pub async fn limit_body(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let declared = req.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > BODY_LIMIT as u64) {
        let (http_req, _) = req.into_parts();
        return Ok(ServiceResponse::new(http_req, ApiError::payload_too_large(BODY_LIMIT).error_response()));
    }
    let has_body =
        declared.is_some_and(|n| n > 0) || req.headers().contains_key(actix_web::http::header::TRANSFER_ENCODING);
    if !has_body {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    }
    if let Some(coding) = encoded(req.headers()) {
        let (http_req, _) = req.into_parts();
        return Ok(ServiceResponse::new(http_req, unsupported_encoding(&coding)));
    }
    let deadline = req.app_data::<actix_web::web::Data<Limits>>().map_or(DEFAULT_BODY_DEADLINE, |l| l.body_deadline);
    let cut: Unread = Unread::default();
    let body = BoundedBody {
        inner: Some(actix_web::HttpMessage::take_payload(&mut req)),
        timer: Box::pin(tokio::time::sleep(deadline)),
        read: 0,
        cut: cut.clone(),
    };
    let body: std::pin::Pin<Box<dyn futures_util::Stream<Item = BodyChunk>>> = Box::pin(body);
    req.set_payload(actix_web::dev::Payload::from(body));
    let res = next.call(req).await;
    let Some((why, unread)) = cut.take() else {
        return res.map(ServiceResponse::map_into_boxed_body);
    };
    let err = match why {
        Cut::TooLarge => ApiError::payload_too_large(BODY_LIMIT),
        Cut::Late => {
            let mut err = ApiError::new(
                actix_web::http::StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!("the request's body did not arrive within {} s of its head", deadline.as_secs()),
            );
            err.details.push(crate::error::Detail {
                field: "body".into(),
                problem: format!("still arriving after {} s", deadline.as_secs()),
            });
            err
        }
    };
    // (The request is cloned only now: a clone taken before routing would stop the router.)
    let http_req = match &res {
        Ok(r) => r.request().clone(),
        Err(_) => return Err(err.into()),
    };
    let mut response = err.error_response();
    // The rest of the body is never read: the connection closes after the answer. The body still
    // coming is held until the answer is written, so that actix-web sees it unread and closes; once
    // dropped, actix-web would read a chunked body to its end first, for as long as it kept coming.
    response.head_mut().set_connection_type(actix_web::http::ConnectionType::Close);
    let response = response.map_body(|_, body| BoxBody::new(HoldingUnread { body, _unread: unread }));
    Ok(ServiceResponse::new(http_req, response))
}

/// The content coding a request's body says it is in, other than `identity`: none is decoded here.
/// (actix-web decodes only with its `compress-*` features, which this service leaves off, so a gzip
/// body reached the extractors as its compressed bytes: "is not valid JSON" at column 1, or a form
/// missing every field.)
fn encoded(headers: &actix_web::http::header::HeaderMap) -> Option<String> {
    let codings: Vec<String> = headers
        .get_all(actix_web::http::header::CONTENT_ENCODING)
        .flat_map(|v| String::from_utf8_lossy(v.as_bytes()).split(',').map(|c| c.trim().to_owned()).collect::<Vec<_>>())
        .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"))
        .collect();
    (!codings.is_empty()).then(|| codings.join(", "))
}

/// 415 for a body in a content coding, naming the header, with `Accept-Encoding: identity` (RFC 9110
/// §12.5.3: the codings a server takes in a request, here none).
fn unsupported_encoding(coding: &str) -> actix_web::HttpResponse {
    let shown: String = coding.chars().take(64).collect();
    let mut err = ApiError::new(
        actix_web::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "send the request's body uncompressed",
    );
    err.details.push(crate::error::Detail {
        field: "Content-Encoding".into(),
        problem: format!("{shown} is not accepted; only identity"),
    });
    let mut response = err.error_response();
    response.headers_mut().insert(
        actix_web::http::header::ACCEPT_ENCODING,
        actix_web::http::header::HeaderValue::from_static("identity"),
    );
    response
}

type BodyChunk = Result<actix_web::web::Bytes, actix_web::error::PayloadError>;

/// Why a body was cut off.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// Its deadline passed.
    Late,
    /// It grew past [`BODY_LIMIT`].
    TooLarge,
}

/// Why the body was cut off, with the rest of it still to come, once it has been.
type Unread = std::rc::Rc<std::cell::RefCell<Option<(Cut, actix_web::dev::Payload)>>>;

/// A request's body that ends in an error once its deadline passes or past [`BODY_LIMIT`] bytes, and
/// leaves why, and the rest of the body, in `cut`.
struct BoundedBody {
    inner: Option<actix_web::dev::Payload>,
    timer: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// Bytes handed on so far.
    read: usize,
    cut: Unread,
}

impl BoundedBody {
    fn cut_off(&mut self, why: Cut, error: actix_web::error::PayloadError) -> Option<BodyChunk> {
        if let Some(unread) = self.inner.take() {
            *self.cut.borrow_mut() = Some((why, unread));
        }
        Some(Err(error))
    }
}

impl futures_util::Stream for BoundedBody {
    type Item = BodyChunk;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let Some(inner) = self.inner.as_mut() else { return Poll::Ready(None) };
        if let Poll::Ready(chunk) = std::pin::Pin::new(inner).poll_next(cx) {
            if let Some(Ok(bytes)) = &chunk {
                self.read = self.read.saturating_add(bytes.len());
                if self.read > BODY_LIMIT {
                    return Poll::Ready(self.cut_off(Cut::TooLarge, actix_web::error::PayloadError::Overflow));
                }
            }
            return Poll::Ready(chunk);
        }
        if self.timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let late = std::io::Error::new(std::io::ErrorKind::TimedOut, "the body did not arrive in time");
        Poll::Ready(self.cut_off(Cut::Late, actix_web::error::PayloadError::Io(late)))
    }
}

/// An answer's body that holds the request's unread body until it is written.
struct HoldingUnread {
    body: BoxBody,
    _unread: actix_web::dev::Payload,
}

impl MessageBody for HoldingUnread {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> actix_web::body::BodySize {
        self.body.size()
    }

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<actix_web::web::Bytes, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_next(cx)
    }
}

/// The rate limit a server enforces: registered as `web::Data<Limits>` beside the `rate_limit` middleware.
#[derive(Debug, Clone)]
pub struct Limits {
    pub limiter: std::sync::Arc<dyn domain::ports::RateLimiter>,
    /// Requests per minute per client.
    pub quota: domain::ratelimit::Quota,
    /// Proxies whose `X-Forwarded-For` is believed (`LAUNCHDIR_TRUSTED_PROXIES`); empty: none.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Checks bearer credentials, so that only a credential that exists earns a bucket of its own.
    pub credentials: Option<CredentialBuckets>,
    /// How long a request's body may take to arrive after its head (`LAUNCHDIR_BODY_TIMEOUT_SECS`).
    pub body_deadline: std::time::Duration,
}

impl Limits {
    pub fn new(
        limiter: std::sync::Arc<dyn domain::ports::RateLimiter>,
        quota: domain::ratelimit::Quota,
        trusted_proxies: Vec<ipnet::IpNet>,
        credentials: Option<CredentialBuckets>,
        body_deadline: std::time::Duration,
    ) -> Self {
        Self { limiter, quota, trusted_proxies, credentials, body_deadline }
    }
}

/// How long a verified credential keeps its own bucket without being checked again, and how many are
/// remembered. A credential revoked meanwhile is still refused by the operation itself (this cache
/// decides only which bucket a request counts against).
const VERIFIED_TTL: std::time::Duration = std::time::Duration::from_secs(60);
const VERIFIED_MAX: u64 = 100_000;

/// Bearer credentials verified recently, each with the bucket it counts against (`key:<id>` for an API
/// key, `user:<id>` for an OAuth access token). Unverified credentials never reach this cache.
#[derive(Clone)]
pub struct CredentialBuckets {
    ctx: operations::Ctx,
    verified: moka::future::Cache<String, String>,
}

impl std::fmt::Debug for CredentialBuckets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialBuckets").field("entries", &self.verified.entry_count()).finish_non_exhaustive()
    }
}

impl CredentialBuckets {
    pub fn new(ctx: operations::Ctx) -> Self {
        let verified = moka::future::Cache::builder().max_capacity(VERIFIED_MAX).time_to_live(VERIFIED_TTL).build();
        Self { ctx, verified }
    }

    /// The bucket of a credential already verified (no lookup).
    async fn cached(&self, credential: &str) -> Option<String> {
        self.verified.get(credential).await
    }

    /// Verifies `credential` (an API key or an access token, for the surface `path` belongs to) and
    /// remembers its bucket; `None` when it is no credential of ours.
    async fn verify(&self, credential: &str, path: &str) -> Option<String> {
        let audience = if path == "/mcp" || path.starts_with("/mcp/") {
            operations::oauth::Audience::Mcp
        } else {
            operations::oauth::Audience::Api
        };
        let p = operations::authenticate(&self.ctx.app, credential, audience).await.ok()?;
        let bucket = match p.via {
            domain::auth::Via::ApiKey(id) => format!("key:{id}"),
            _ => format!("user:{}", p.user_id.get()),
        };
        self.verified.insert(credential.to_owned(), bucket.clone()).await;
        Some(bucket)
    }
}

/// The bucket of an address: an IPv4 address alone, an IPv6 client by its /64 (one subscriber's
/// network, which a client can fill with addresses at will).
pub fn address_bucket(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => format!("ip:{v4}"),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => format!("ip:{v4}"),
            None => {
                let s = v6.segments();
                let net = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
                format!("ip:{net}/64")
            }
        },
    }
}

/// The caller's network as the per-network quotas key it (sign-in, sign-up, client registration, the
/// rate limit): [`address_bucket`] of [`client_address`], or `ip:unknown` for a connection with no
/// peer address, which all such connections then share.
pub fn client_network(req: &actix_web::HttpRequest) -> String {
    client_address(req).map_or_else(|| "ip:unknown".to_owned(), address_bucket)
}

/// The client's address: the peer, or, when the peer is a proxy the operator trusts
/// (`LAUNCHDIR_TRUSTED_PROXIES`), the address it reports (see [`forwarded_for`]). What the rate limit
/// keys anonymous callers by, and the site's vote cap.
pub fn client_address(req: &actix_web::HttpRequest) -> Option<std::net::IpAddr> {
    let peer = req.peer_addr().map(|a| a.ip())?;
    let trusted = req.app_data::<actix_web::web::Data<Limits>>().map(|l| l.trusted_proxies.as_slice()).unwrap_or(&[]);
    Some(forwarded_for(req, peer, trusted).unwrap_or(peer))
}

/// The client address trusted proxies report: `X-Forwarded-For` read from the right (each proxy
/// appends the address it was reached from), skipping the trusted proxies themselves; the first
/// address that is not one is the client. From an untrusted peer the header is ignored, so a client
/// cannot choose its own address.
fn forwarded_for(
    req: &actix_web::HttpRequest,
    peer: std::net::IpAddr,
    trusted: &[ipnet::IpNet],
) -> Option<std::net::IpAddr> {
    let is_trusted = |ip: &std::net::IpAddr| trusted.iter().any(|n| n.contains(ip));
    if !is_trusted(&peer) {
        return None;
    }
    // Several header lines are one list in order; a proxy appends to the last.
    let mut all = Vec::new();
    for value in req.headers().get_all("x-forwarded-for") {
        all.extend(value.to_str().ok()?.split(',').map(|a| a.trim().parse::<std::net::IpAddr>().ok()));
    }
    for entry in all.into_iter().rev() {
        // An entry that is no address stops the walk: nothing to its left can be trusted.
        let ip = entry?;
        if !is_trusted(&ip) {
            return Some(ip);
        }
    }
    None
}

/// Who a request counts against. A bearer credential earns its own bucket only once verified (cached
/// for [`VERIFIED_TTL`]); an unverified one counts against the client's address, and is verified only
/// if the address still has quota — so inventing well-formed keys neither escapes the limit nor buys
/// database lookups past it.
async fn bucket_of(req: &ServiceRequest, limits: &Limits) -> (String, Option<String>) {
    let address = client_network(req.request());
    let crate::Caller::Bearer(raw) = crate::caller_of(req.request()) else { return (address, None) };
    let Some(check) = &limits.credentials else { return (address, None) };
    match check.cached(&raw).await {
        Some(bucket) => (bucket, None),
        None => (address, Some(raw)),
    }
}

/// The 429 of a refused `d`, with `Retry-After`.
fn too_many(d: &domain::ratelimit::Decision) -> actix_web::HttpResponse {
    let retry = d.retry_after.unwrap_or_default();
    let retry = (retry.as_secs() + u64::from(retry.subsec_nanos() > 0)).max(1);
    let mut r = ApiError::rate_limited(retry).error_response();
    if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&retry.to_string()) {
        r.headers_mut().insert(actix_web::http::header::RETRY_AFTER, v);
    }
    r
}

/// Counts `more` requests of `req`'s client against the rate limit on top of the one [`rate_limit`]
/// counted (the messages of a JSON-RPC batch past its first): the 429 to answer once the limit is
/// passed. Without [`Limits`] nothing is counted.
pub async fn count_more(req: &ServiceRequest, more: usize) -> Result<(), actix_web::HttpResponse> {
    let Some(limits) = req.app_data::<actix_web::web::Data<Limits>>() else { return Ok(()) };
    let (client, _) = bucket_of(req, limits).await;
    for _ in 0..more {
        let d = limits.limiter.check(&client, limits.quota).await;
        if !d.allowed {
            return Err(too_many(&d));
        }
    }
    Ok(())
}

/// The rate limit of every operation, page and tool (probes are exempt): 429 with `Retry-After` past
/// it, and `RateLimit-Limit` / `RateLimit-Remaining` / `RateLimit-Reset` on every response.
pub async fn rate_limit(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    if matches!(req.path(), "/healthz" | "/readyz") {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    }
    let Some(limits) = req.app_data::<actix_web::web::Data<Limits>>().cloned() else {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    };
    let (client, unverified) = bucket_of(&req, &limits).await;
    let mut d = limits.limiter.check(&client, limits.quota).await;
    if d.allowed
        && let (Some(raw), Some(check)) = (unverified, &limits.credentials)
        && let Some(bucket) = check.verify(&raw, req.path()).await
    {
        // A real credential seen for the first time in a while: from now on it counts on its own.
        d = limits.limiter.check(&bucket, limits.quota).await;
    }
    let secs = |d: std::time::Duration| d.as_secs() + u64::from(d.subsec_nanos() > 0);
    let headers = [
        ("ratelimit-limit", d.limit.to_string()),
        ("ratelimit-remaining", d.remaining.to_string()),
        ("ratelimit-reset", secs(d.reset).to_string()),
    ];
    let mut res = if d.allowed {
        next.call(req).await?.map_into_boxed_body()
    } else {
        let (http_req, _) = req.into_parts();
        ServiceResponse::new(http_req, too_many(&d))
    };
    for (name, value) in headers {
        if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&value) {
            res.headers_mut().insert(actix_web::http::header::HeaderName::from_static(name), v);
        }
    }
    Ok(res)
}
