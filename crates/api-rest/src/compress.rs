//! gzip for the responses anyone may keep: sitemaps, feeds, the style sheet, badges.
//!
//! A response is compressed when the client accepts gzip and the response says `Cache-Control:
//! public` — a response a shared cache may hand to anyone, so it holds nothing of one visitor's: no
//! session's CSRF token, no account's data. Compressing a response that holds a secret beside text
//! an attacker chose (a search echoed on a signed-in page) lets the compressed length tell the secret
//! a byte at a time (BREACH), so pages (`no-store`, a signed-in visitor's token in their forms) and
//! the API's JSON are left as they are; a proxy in front may compress them by its own rules.
//!
//! The listings sitemap is streamed (a million listings are twenty files none of which is held whole),
//! so the body is compressed as it goes, chunk by chunk; a body under [`SMALLEST`] is not worth the
//! gzip frame. Every response that could be compressed says `Vary: Accept-Encoding`, compressed or
//! not, so a shared cache keeps the two apart.

use actix_web::Error;
use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Bodies smaller than this are sent as they are (a gzip frame alone is 20 bytes, and a short body
/// hardly shrinks).
pub const SMALLEST: u64 = 1024;

/// The level. The launches feed at 100k listings (140 KB) is 14.2 KB at 1 and 10.8 KB at 5, a listings
/// sitemap (4.2 MB) 275 KB and 199 KB; level 5 cost the server 0.84–1.08 ms a feed and level 1
/// 0.19–0.20 ms, against 0.07–0.09 ms unzipped (docs/BENCHMARKS.md): the CPU is the scarcer.
const LEVEL: u32 = 1;

/// Compresses a public response with gzip when the request accepts it (see the module).
pub async fn gzip_public(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let mut res = next.call(req).await?.map_into_boxed_body();
    if !compressible(res.status(), res.headers()) {
        return Ok(res);
    }
    res.headers_mut().append(header::VARY, HeaderValue::from_static("accept-encoding"));
    // The request's Accept-Encoding is read only for a response that could be zipped. A HEAD gets
    // the headers its GET would (the writers leave the body out).
    let request = res.request();
    let accepts = matches!(*request.method(), Method::GET | Method::HEAD) && accepts_gzip(request.headers());
    let small = matches!(res.response().body().size(), BodySize::Sized(n) if n < SMALLEST);
    if !accepts || small {
        return Ok(res);
    }
    res.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    res.headers_mut().remove(header::CONTENT_LENGTH);
    Ok(res.map_body(|_, body| BoxBody::new(Gzip::new(body))))
}

/// Whether `headers` (a request's) accept gzip: `gzip` or `*` listed without `q=0`, and gzip not
/// refused by name.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut named = None;
    let mut any = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
                .map(|q| q.trim().parse::<f32>().unwrap_or(0.0))
                .next()
                .unwrap_or(1.0);
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                named = Some(named.unwrap_or(false) || q > 0.0);
            } else if coding == "*" {
                any = Some(q > 0.0);
            }
        }
    }
    named.or(any).unwrap_or(false)
}

/// Whether a response with this status and these headers may be compressed: a 200, not already
/// encoded, `Cache-Control: public`, and text (HTML, XML, Atom, JSON, CSS, SVG, plain).
fn compressible(status: StatusCode, headers: &HeaderMap) -> bool {
    // Every response passes here; most are not public and stop at the first header read.
    let value = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    let public =
        || value(header::CACHE_CONTROL).is_some_and(|v| v.split(',').any(|d| d.trim().eq_ignore_ascii_case("public")));
    let text = || {
        value(header::CONTENT_TYPE).is_some_and(|t| {
            let t = t.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
            t.starts_with("text/") || t.ends_with("+xml") || t.ends_with("/xml") || t.ends_with("/json")
        })
    };
    status == StatusCode::OK && public() && text() && !headers.contains_key(header::CONTENT_ENCODING)
}

/// A body compressed as it is read: each chunk of the inner body is written to the encoder and what
/// the encoder has produced so far is sent; the end sends the gzip trailer.
struct Gzip {
    inner: BoxBody,
    encoder: Option<GzEncoder<Vec<u8>>>,
}

impl Gzip {
    fn new(inner: BoxBody) -> Self {
        Self { inner, encoder: Some(GzEncoder::new(Vec::new(), Compression::new(LEVEL))) }
    }
}

impl MessageBody for Gzip {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        BodySize::Stream
    }

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        loop {
            let Some(encoder) = self.encoder.as_mut() else { return Poll::Ready(None) };
            let produced = std::mem::take(encoder.get_mut());
            if !produced.is_empty() {
                return Poll::Ready(Some(Ok(Bytes::from(produced))));
            }
            match std::task::ready!(Pin::new(&mut self.inner).poll_next(cx)) {
                Some(Ok(chunk)) => {
                    if let Some(encoder) = self.encoder.as_mut() {
                        encoder.write_all(&chunk)?;
                    }
                }
                Some(Err(e)) => {
                    self.encoder = None;
                    return Poll::Ready(Some(Err(e)));
                }
                None => {
                    let Some(encoder) = self.encoder.take() else { return Poll::Ready(None) };
                    let rest = encoder.finish()?;
                    return Poll::Ready(Some(Ok(Bytes::from(rest))));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderName;
    use actix_web::middleware::from_fn;
    use actix_web::test as http;
    use actix_web::{App, HttpResponse, web};
    use std::io::Read;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(HeaderName::try_from(*k).expect("a name"), HeaderValue::from_str(v).expect("a value"));
        }
        h
    }

    #[test]
    fn accept_encoding_is_read_as_rfc_9110_says() {
        let accepts = |v: &str| accepts_gzip(&headers(&[("accept-encoding", v)]));
        assert!(accepts("gzip"));
        assert!(accepts("gzip, deflate, br"), "a browser's");
        assert!(accepts("br;q=1.0, GZIP;q=0.5"), "case and weights");
        assert!(accepts("*"));
        assert!(accepts("x-gzip"));
        assert!(!accepts("gzip;q=0"), "refused by name");
        assert!(!accepts("gzip; q=0.0, *"), "refused by name beats the wildcard");
        assert!(!accepts("*;q=0"));
        assert!(!accepts("identity"));
        assert!(!accepts("br, deflate"));
        assert!(!accepts("gzip;q=nonsense"), "an unreadable weight is no weight");
        assert!(!accepts(""));
        assert!(!accepts_gzip(&HeaderMap::new()), "no header: as it is");
        let many = format!("{}gzip", "a;q=1, ".repeat(2_000));
        assert!(accepts(&many), "a long list is read through");
    }

    fn xml(n: usize) -> String {
        let mut s = String::from("<urlset>");
        for i in 0..n {
            s.push_str(&format!("<url><loc>https://launchdir.example/listings/listing-{i}</loc></url>\n"));
        }
        s + "</urlset>"
    }

    /// A response of `status` with this content type, `Cache-Control` and body.
    fn respond(status: StatusCode, content_type: &str, cache: &str, body: impl MessageBody + 'static) -> HttpResponse {
        HttpResponse::build(status)
            .content_type(content_type)
            .insert_header((header::CACHE_CONTROL, cache))
            .message_body(BoxBody::new(body))
            .expect("a response")
    }

    macro_rules! app {
        () => {
            http::init_service(
                App::new()
                    .wrap(from_fn(gzip_public))
                    .route(
                        "/sitemap.xml",
                        web::get().to(|| async {
                            respond(StatusCode::OK, "application/xml; charset=utf-8", "public, max-age=600", xml(2_000))
                        }),
                    )
                    .route(
                        "/streamed.xml",
                        web::get().to(|| async {
                            let parts = (0..50).map(|i| Ok::<_, Error>(Bytes::from(xml(i * 10))));
                            let body = actix_web::body::BodyStream::new(futures_util::stream::iter(parts));
                            respond(StatusCode::OK, "application/xml", "public, max-age=600", body)
                        }),
                    )
                    .route(
                        "/page",
                        web::get().to(|| async {
                            let page = format!("<form><input name=csrf value=secret></form>{}", xml(500));
                            respond(StatusCode::OK, "text/html; charset=utf-8", "no-store", page)
                        }),
                    )
                    .route("/api", web::get().to(|| async { HttpResponse::Ok().json(xml(500)) }))
                    .route(
                        "/tiny.css",
                        web::get().to(|| async { respond(StatusCode::OK, "text/css", "public", "a{}") }),
                    )
                    .route(
                        "/logo.png",
                        web::get().to(|| async { respond(StatusCode::OK, "image/png", "public", vec![0u8; 4096]) }),
                    )
                    .route(
                        "/gone.xml",
                        web::get()
                            .to(|| async { respond(StatusCode::NOT_FOUND, "application/xml", "public", xml(100)) }),
                    ),
            )
            .await
        };
    }

    macro_rules! get {
        ($app:expr, $path:expr, $accept:expr) => {{
            let mut req = http::TestRequest::get().uri($path);
            if let Some(a) = $accept {
                req = req.insert_header((header::ACCEPT_ENCODING, a));
            }
            let res = http::call_service(&$app, req.to_request()).await;
            let (status, headers) = (res.status(), res.headers().clone());
            (status, headers, http::read_body(res).await.to_vec())
        }};
    }

    fn gunzip(bytes: &[u8]) -> String {
        let mut out = String::new();
        flate2::read::GzDecoder::new(bytes).read_to_string(&mut out).expect("a gzip stream");
        out
    }

    fn header(h: &HeaderMap, name: header::HeaderName) -> Option<&str> {
        h.get(name).and_then(|v| v.to_str().ok())
    }

    #[actix_web::test]
    async fn public_text_is_compressed_for_a_client_that_accepts_gzip() {
        let app = app!();
        let (status, h, body) = get!(app, "/sitemap.xml", Some("gzip, deflate, br"));
        assert_eq!(status, StatusCode::OK);
        assert_eq!(header(&h, header::CONTENT_ENCODING), Some("gzip"));
        assert_eq!(header(&h, header::VARY), Some("accept-encoding"));
        assert_eq!(gunzip(&body), xml(2_000), "the same document");
        assert!(body.len() * 10 < xml(2_000).len(), "{} bytes of {}", body.len(), xml(2_000).len());

        let (_, h, body) = get!(app, "/sitemap.xml", None::<&str>);
        assert_eq!(header(&h, header::CONTENT_ENCODING), None, "no Accept-Encoding: as it is");
        assert_eq!(header(&h, header::VARY), Some("accept-encoding"), "a cache keeps the two apart");
        assert_eq!(String::from_utf8(body).expect("text"), xml(2_000));

        let (_, h, _) = get!(app, "/sitemap.xml", Some("gzip;q=0, *"));
        assert_eq!(header(&h, header::CONTENT_ENCODING), None, "gzip refused");
    }

    /// A streamed body (the listings sitemap) is compressed as it comes, whole in the end.
    #[actix_web::test]
    async fn a_streamed_body_is_compressed_chunk_by_chunk() {
        let app = app!();
        let (status, h, body) = get!(app, "/streamed.xml", Some("gzip"));
        assert_eq!(status, StatusCode::OK);
        assert_eq!(header(&h, header::CONTENT_ENCODING), Some("gzip"));
        let whole: String = (0..50).map(|i| xml(i * 10)).collect();
        assert_eq!(gunzip(&body), whole);
    }

    /// Nothing that may hold one visitor's secret is compressed (BREACH), nor what would not gain.
    #[actix_web::test]
    async fn pages_api_json_small_bodies_images_and_errors_are_left_as_they_are() {
        let app = app!();
        for (path, vary) in [
            ("/page", None),
            ("/api", None),
            ("/tiny.css", Some("accept-encoding")),
            ("/logo.png", None),
            ("/gone.xml", None),
        ] {
            let (_, h, body) = get!(app, path, Some("gzip"));
            assert_eq!(header(&h, header::CONTENT_ENCODING), None, "{path}");
            assert_eq!(header(&h, header::VARY), vary, "{path}");
            assert!(!body.starts_with(&[0x1f, 0x8b]), "{path} is not gzip");
        }
    }
}
