//! HTTP behaviour shared by every route: probes, the JSON error shape, 404, 405, 413.

use crate::helpers::{spawn_app, spawn_app_on};
use api_rest::middleware::BODY_LIMIT;
use serde_json::Value;

#[tokio::test]
async fn probes_answer() {
    let app = spawn_app(false).await;
    let health = app.get("/healthz").await;
    assert_eq!(health.status(), 200, "alive at once");
    app.wait_ready().await;
    let ready: Value = app.get("/readyz").await.json().await.unwrap();
    assert_eq!(ready["status"], "ready");
}

#[tokio::test]
async fn unknown_routes_are_json_404s() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let r = app.get("/no/such/route").await;
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");
    assert!(body["error"]["message"].as_str().unwrap().contains("not found"));
    assert!(body["error"]["details"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn wrong_methods_are_json_405s() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    for path in ["/healthz", "/readyz"] {
        let r = app.client.delete(format!("{}{path}", app.base)).send().await.unwrap();
        assert_eq!(r.status(), 405, "{path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "method_not_allowed");
    }
    // API resources say which methods they take (RFC 9110), OPTIONS among them (CORS preflights).
    for (method, path, allow) in [
        ("TRACE", "/api/v1/listings", "GET, HEAD, OPTIONS"),
        ("DELETE", "/api/v1/claims", "GET, HEAD, OPTIONS, POST"),
        ("PUT", "/api/v1/openapi.json", "GET, HEAD, OPTIONS"),
        ("PUT", "/api/v1/drafts/1/submit", "OPTIONS, POST"),
    ] {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let r = app.client.request(m, format!("{}{path}", app.base)).send().await.unwrap();
        assert_eq!(r.status(), 405, "{method} {path}");
        let got = r.headers().get("allow").map(|v| v.to_str().unwrap().to_owned());
        let mut got: Vec<String> = got.unwrap_or_default().split(", ").map(str::to_owned).collect();
        got.sort();
        assert_eq!(got.join(", "), allow, "{method} {path}");
    }
}

/// Every resource that answers GET answers HEAD (RFC 9110 §9.3.2: the same status and header fields,
/// no body), as uptime monitors, link checkers and `curl -I` ask. Before, actix-web routed HEAD to no
/// handler: `HEAD /` and `HEAD /healthz` were 405s, so a monitor's default probe saw the site down.
/// A HEAD is nobody reading the page, so it counts no view.
#[tokio::test]
async fn head_answers_as_get_without_the_body() {
    let app = crate::helpers::spawn_app_configured(test_support::sqlite(), true, |a| a.read_cache_secs = 0).await;
    app.wait_ready().await;
    let slug =
        app.get("/api/v1/listings?per_page=1&sort=votes").await.json::<Value>().await.unwrap()["items"][0]["slug"]
            .as_str()
            .unwrap()
            .to_owned();
    let views = || async {
        let v: Value = app.get(&format!("/api/v1/listings/{slug}")).await.json().await.unwrap();
        v["views"].as_i64().unwrap()
    };
    let before = views().await;
    let browser = "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0";
    for path in [
        "/healthz".to_owned(),
        "/readyz".into(),
        "/".into(),
        format!("/listings/{slug}"),
        "/categories".into(),
        "/robots.txt".into(),
        "/sitemap.xml".into(),
        "/feeds/launches.atom".into(),
        "/api/v1/categories".into(),
        format!("/api/v1/listings/{slug}"),
        "/api/v1/openapi.json".into(),
    ] {
        let url = format!("{}{path}", app.base);
        let got = app.client.get(&url).header("user-agent", browser).send().await.unwrap();
        let (status, kind) = (got.status(), got.headers().get("content-type").cloned());
        let head = app.client.head(&url).header("user-agent", browser).send().await.unwrap();
        assert_eq!(head.status(), status, "HEAD {path}");
        assert_eq!(head.headers().get("content-type"), kind.as_ref(), "HEAD {path}");
        assert!(head.bytes().await.unwrap().is_empty(), "HEAD {path} sends no body");
    }
    // A HEAD of an unknown page is the GET's 404; of a POST-only resource, a 405.
    let r = app.client.head(format!("{}/listings/no-such-listing-here", app.base)).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let r = app.client.head(format!("{}/api/v1/drafts/1/submit", app.base)).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(views().await, before + 1, "the GET of the listing page counted one view");
    // A visitor the page has not seen: their HEAD counts nothing, their GET one.
    let page = format!("{}/listings/{slug}", app.base);
    let someone = "Mozilla/5.0 (Macintosh) Safari/605.1.15 someone-new";
    assert_eq!(app.client.head(&page).header("user-agent", someone).send().await.unwrap().status(), 200);
    assert_eq!(views().await, before + 1, "a HEAD of the listing page counts no view");
    assert_eq!(app.client.get(&page).header("user-agent", someone).send().await.unwrap().status(), 200);
    assert_eq!(views().await, before + 2, "the same visitor's GET counts one");
}

#[tokio::test]
async fn bodies_over_one_mebibyte_get_413() {
    let app = spawn_app(false).await;
    let post = |n: usize| {
        app.client
            .post(format!("{}/healthz", app.base))
            .header("content-type", "application/json")
            .body(vec![b' '; n])
            .send()
    };
    let at_limit = post(BODY_LIMIT).await.unwrap();
    assert_eq!(at_limit.status(), 405, "a body of exactly 1 MiB passes the limit and reaches routing");
    let over = post(BODY_LIMIT + 1).await.unwrap();
    assert_eq!(over.status(), 413);
    let body: Value = over.json().await.unwrap();
    assert_eq!(body["error"]["code"], "payload_too_large");
}

/// What a body alone can cause (too large, in an encoding, of another type) is in the OpenAPI document
/// of every operation, as the 408 of a late body is: any request may carry a body, and a generated
/// client that trusts the document meets no status it was not told of.
#[tokio::test]
async fn what_a_body_alone_can_cause_is_documented_for_every_operation() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let doc: Value = app.get("/api/v1/openapi.json").await.json().await.unwrap();
    let mut seen = std::collections::BTreeMap::<u16, usize>::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for status in ["408", "413", "415"] {
                assert!(op["responses"][status].is_object(), "{method} {path} does not document {status}");
            }
            // Each path parameter as `1`: the answers asked of here come before any record is looked up.
            let filled: Vec<&str> =
                path.split('/').map(|seg| if seg.starts_with('{') && seg.ends_with('}') { "1" } else { seg }).collect();
            let url = format!("{}/api/v1{}", app.base, filled.join("/"));
            let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let sends = [
                ("application/json", None, vec![b' '; BODY_LIMIT + 1]),
                ("application/json", Some("gzip"), b"{}".to_vec()),
                ("text/plain", None, b"{}".to_vec()),
            ];
            for (content_type, encoding, body) in sends {
                let mut req = app.client.request(method.clone(), &url).header("content-type", content_type);
                if let Some(coding) = encoding {
                    req = req.header("content-encoding", coding);
                }
                let status = req.body(body).send().await.unwrap().status().as_u16();
                assert!(
                    op["responses"][status.to_string()].is_object(),
                    "{method} {path} answered {status} ({content_type}, {encoding:?}), which it does not document"
                );
                *seen.entry(status).or_default() += 1;
            }
        }
    }
    assert!(seen.get(&413).is_some_and(|n| *n > 10) && seen.get(&415).is_some_and(|n| *n > 10), "{seen:?}");
}

/// A body sent without a length (chunked) is cut at the same 1 MiB, and its 413 is in the CONTRACT's
/// shape wherever it is read: an API operation, a site form, /mcp. Before, the payload extractors
/// answered it themselves, in plain text ("payload reached size limit"). A chunked body of exactly
/// 1 MiB passes.
#[tokio::test]
async fn chunked_bodies_over_one_mebibyte_get_the_json_413() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let send = |path: &'static str, ctype: &'static str, n: usize| {
        let addr = addr.clone();
        async move {
            let mut c = tokio::net::TcpStream::connect(&addr).await.unwrap();
            let head = format!(
                "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {ctype}\r\n\
                 Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            );
            c.write_all(head.as_bytes()).await.unwrap();
            // In pieces of 64 KiB, as a client streaming a body does; the server may answer and close
            // before the last.
            let piece = vec![b'a'; 64 * 1024];
            let mut left = n;
            while left > 0 {
                let k = left.min(piece.len());
                let chunk = [format!("{k:x}\r\n").as_bytes(), &piece[..k], b"\r\n"].concat();
                if c.write_all(&chunk).await.is_err() {
                    break;
                }
                left -= k;
            }
            let _ = c.write_all(b"0\r\n\r\n").await;
            let mut answer = Vec::new();
            let _ = tokio::time::timeout(std::time::Duration::from_secs(10), c.read_to_end(&mut answer)).await;
            let answer = String::from_utf8_lossy(&answer).into_owned();
            let status: u16 = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            (status, answer)
        }
    };
    for (path, ctype) in [
        ("/api/v1/drafts", "application/json"),
        ("/signin", "application/x-www-form-urlencoded"),
        ("/mcp", "application/json"),
    ] {
        let (status, answer) = send(path, ctype, BODY_LIMIT + 1).await;
        assert_eq!(status, 413, "{path}: {answer:.600}");
        assert!(answer.to_ascii_lowercase().contains("content-type: application/json"), "{path}: {answer:.600}");
        assert!(answer.contains(r#""code":"payload_too_large""#), "{path}: {answer:.600}");
    }
    // At the limit the body is read whole and reaches the operation, which finds it is not JSON.
    let (status, answer) = send("/api/v1/drafts", "application/json", BODY_LIMIT).await;
    assert_eq!(status, 400, "{answer:.600}");
    assert!(answer.contains("is not valid JSON"), "{answer:.600}");
}

#[tokio::test]
async fn readyz_is_503_when_the_database_is_gone() {
    use sea_orm::{ConnectionTrait, Database};
    let Some(db) = test_support::postgres().await else { return };
    let app = spawn_app_on(db, false).await;
    app.wait_ready().await;
    let name = app.db.url.rsplit('/').next().unwrap().to_owned();
    let admin = Database::connect(&test_support::postgres_admin_url()).await.unwrap();
    admin.execute_unprepared(&format!("DROP DATABASE \"{name}\" WITH (FORCE)")).await.unwrap();
    let r = app.get("/readyz").await;
    assert_eq!(r.status(), 503);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable");
    assert_eq!(app.get("/healthz").await.status(), 200, "alive, just not ready");
}

/// A database that stops answering (paused, or the network to it stalled: no reset, no answer) makes
/// `/readyz` a 503 within its bound, so a load balancer's probe gets an answer rather than its own
/// timeout; once the database answers again, so is the service. Before, the readiness ping waited on
/// the stalled connection for as long as the probe did (no answer in 8 s here).
#[tokio::test]
async fn readyz_answers_503_in_time_when_the_database_stalls() {
    use test_support::{ProxyMode, TcpProxy};
    let Some(mut db) = test_support::postgres().await else { return };
    let proxy = TcpProxy::start(test_support::url_parts(&db.url, 5432).2).await;
    db.url = test_support::url_via(&db.url, &proxy.host_port());
    let app = spawn_app_on(db, false).await;
    app.wait_ready().await;

    proxy.set(ProxyMode::Stalled);
    let probe = reqwest::Client::builder().timeout(std::time::Duration::from_secs(8)).build().unwrap();
    let started = std::time::Instant::now();
    let r = probe.get(format!("{}/readyz", app.base)).send().await;
    let took = started.elapsed();
    let r = r.unwrap_or_else(|e| panic!("/readyz did not answer while the database stalled: {e} after {took:?}"));
    assert_eq!(r.status(), 503);
    assert!(took < api_rest::probes::READY_CHECK + std::time::Duration::from_secs(1), "{took:?}");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable");

    proxy.set(ProxyMode::Forward);
    app.wait_ready().await;
}

/// While start-up loads the demo data, nothing but the probes answers (503, the error shape,
/// `Retry-After`), and the first answer after it counts everything that was loaded — not a cached
/// "0 live listings" from the half-loaded database.
#[tokio::test]
async fn nothing_answers_before_ready_and_nothing_stale_is_kept() {
    let app = crate::helpers::spawn_app_configured(test_support::sqlite(), true, |a| {
        a.read_cache_secs = 600;
        a.rate_limit = 1_000_000;
    })
    .await;
    let mut early = Vec::new();
    let started = std::time::Instant::now();
    loop {
        let r = app.get("/api/v1/site").await;
        let status = r.status().as_u16();
        let retry = r.headers().get("retry-after").is_some();
        let body: serde_json::Value = r.json().await.unwrap_or_default();
        if status == 200 {
            assert_eq!(app.get("/readyz").await.status(), 200, "an answer before ready");
            assert!(body["counts"]["live_listings"].as_u64().unwrap_or(0) > 0, "a stale or half-loaded answer: {body}");
            break;
        }
        early.push((status, retry, body["error"]["code"].as_str().unwrap_or_default().to_owned()));
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "never ready");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(!early.is_empty(), "the test never saw the service starting");
    assert!(early.iter().all(|(s, retry, code)| *s == 503 && *retry && code == "unavailable"), "{early:?}");
    let healthz = app.get("/healthz").await;
    assert_eq!(healthz.status(), 200);
}

/// The status codes the spec names: an order number of any other shape is just no order of yours
/// (404), a body that is invalid is a 400 before any lookup could make it a 404, and a body in another
/// format than JSON is a 415.
#[tokio::test]
async fn status_codes_follow_the_spec() {
    use domain::user::Scope::*;
    let db = test_support::sqlite();
    let key = crate::drafts::key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite, OrdersWrite]).await;
    let app = crate::helpers::spawn_app_configured(db, false, |_| {}).await;
    app.wait_ready().await;
    for number in ["LD-0000000000", "not-an-order", "x", "LD-!!"] {
        let (st, e) = crate::own::call(&app, "GET", &format!("/orders/{number}"), &key, None).await;
        assert_eq!((st, e["error"]["code"].as_str()), (404, Some("not_found")), "{number}: {e}");
    }
    let body = serde_json::json!({"slug": "no-such-listing", "method": "email", "email": "not an email"});
    let (st, e) = crate::own::call(&app, "POST", "/claims", &key, Some(body)).await;
    assert_eq!((st, e["error"]["details"][0]["field"].as_str()), (400, Some("email")), "{e}");
    let r = app
        .client
        .post(format!("{}/api/v1/drafts", app.base))
        .bearer_auth(&key)
        .header("content-type", "text/plain")
        .body(r#"{"url": "https://acme.example"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let e: serde_json::Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "unsupported_media_type");
    // With the right type the same body is taken (charset and +json variants too).
    for ct in ["application/json", "application/json; charset=utf-8"] {
        let r = app
            .client
            .post(format!("{}/api/v1/orders/quote", app.base))
            .bearer_auth(&key)
            .header("content-type", ct)
            .body(r#"{"items": []}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{ct}: parsed, then refused for its empty items");
    }
}

/// A page's form that cannot be read as one (another content type, a field given twice, a value that
/// is not of its type) is answered in the error shape naming what is wrong, like every other error;
/// the form extractor answered it in plain text ("Content type error.", "Parse error: duplicate field
/// `email`.").
#[tokio::test]
async fn unreadable_forms_get_the_error_shape_naming_the_field() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let form = |ctype: &'static str, body: &'static str| {
        app.client.post(format!("{}/signin", app.base)).header("content-type", ctype).body(body).send()
    };
    let cases = [
        (form("application/json", r#"{"email":"a@example.com"}"#).await.unwrap(), 415, "unsupported_media_type"),
        (form("text/plain", "email=a").await.unwrap(), 415, "unsupported_media_type"),
        (
            form("application/x-www-form-urlencoded", "email=a%40example.com&email=b&password=x").await.unwrap(),
            400,
            "invalid_request",
        ),
    ];
    for (i, (r, status, code)) in cases.into_iter().enumerate() {
        assert_eq!(r.status().as_u16(), status, "case {i}");
        assert_eq!(r.headers()["content-type"], "application/json", "case {i}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], code, "case {i}: {body}");
        if status == 400 {
            assert_eq!(body["error"]["details"][0]["field"], "email", "case {i}: {body}");
        }
    }
}

/// A page's query string that its handler cannot read (a parameter given twice) is a 400 naming that
/// parameter, not the query string as a whole.
#[tokio::test]
async fn an_unreadable_query_names_its_parameter() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    // The query is read before the listing is looked up: any slug.
    let r = app
        .client
        .get(format!("{}/badges/some-slug/listed-on.svg?shape=rounded&shape=pill", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["details"][0]["field"], "shape", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("duplicate"), "{body}");
}

/// A body in a content coding (gzip, deflate, br, zstd) is a 415 naming `Content-Encoding`, with
/// `Accept-Encoding: identity`, on an operation, a form and `/mcp`. (Before, nothing decoded it: the
/// operation said the JSON was invalid at column 1 and the sign-in form said `email` was missing.)
#[tokio::test]
async fn a_compressed_body_is_a_415_naming_content_encoding() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    // The first bytes of a gzip stream; what follows does not matter, nothing reads it.
    let gzipped = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xabV".to_vec();
    let post = |path: &'static str, ctype: &'static str, coding: &'static str, body: Vec<u8>| {
        app.client
            .post(format!("{}{path}", app.base))
            .header("content-type", ctype)
            .header("accept", "application/json, text/event-stream")
            .header("content-encoding", coding)
            .body(body)
            .send()
    };
    for (path, ctype, coding) in [
        ("/api/v1/drafts", "application/json", "gzip"),
        ("/signin", "application/x-www-form-urlencoded", "deflate"),
        ("/mcp", "application/json", "br"),
        ("/api/v1/drafts", "application/json", "identity, zstd"),
    ] {
        let r = post(path, ctype, coding, gzipped.clone()).await.unwrap();
        assert_eq!(r.status(), 415, "{path} {coding}");
        assert_eq!(r.headers()["accept-encoding"], "identity", "{path}");
        assert_eq!(r.headers()["content-type"], "application/json", "{path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unsupported_media_type", "{body}");
        assert_eq!(body["error"]["details"][0]["field"], "Content-Encoding", "{body}");
    }
    // `identity` is no coding at all: the body reaches the form, which reads it.
    let r = post("/signin", "application/x-www-form-urlencoded", "identity", b"email=a%40example.com".to_vec())
        .await
        .unwrap();
    assert_ne!(r.status(), 415);
    let text = r.text().await.unwrap();
    assert!(!text.contains("Content-Encoding"), "{text:.300}");
}

/// A page of another origin can call the REST API (a maker's page showing its votes, a browser client
/// with its API key): every answer under `/api/v1` — errors and 429s too — carries
/// `Access-Control-Allow-Origin: *` and exposes the rate-limit headers, and a preflight is a 204 naming
/// the resource's methods and the headers it takes. The site's pages and `/mcp` do not. (Before, a
/// preflight was a 405 and no answer carried the header, so no browser could read one.)
#[tokio::test]
async fn the_api_is_readable_from_any_origin_and_nothing_else_is() {
    use reqwest::Method;
    let app = crate::helpers::spawn_app_configured(test_support::sqlite(), false, |a| a.rate_limit = 12).await;
    app.wait_ready().await;
    let send = |method: Method, path: &str| {
        app.client
            .request(method, format!("{}{path}", app.base))
            .header("origin", "https://maker.example")
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "authorization, content-type, idempotency-key")
            .send()
    };
    let pre = send(Method::OPTIONS, "/api/v1/drafts").await.unwrap();
    assert_eq!(pre.status(), 204);
    assert_eq!(pre.headers()["access-control-allow-origin"], "*");
    let methods = pre.headers()["access-control-allow-methods"].to_str().unwrap().to_owned();
    for m in ["GET", "HEAD", "POST", "OPTIONS"] {
        assert!(methods.split(", ").any(|x| x == m), "{m} in {methods}");
    }
    assert!(!methods.contains("PATCH"), "only the resource's own methods: {methods}");
    assert_eq!(pre.headers()["allow"], methods.as_str());
    let headers = pre.headers()["access-control-allow-headers"].to_str().unwrap().to_ascii_lowercase();
    for h in ["authorization", "content-type", "idempotency-key"] {
        assert!(headers.contains(h), "{h} in {headers}");
    }
    // A resource with a parameter, and the OpenAPI document.
    for path in ["/api/v1/drafts/1", "/api/v1/listings/some-slug", "/api/v1/openapi.json"] {
        let r = send(Method::OPTIONS, path).await.unwrap();
        assert_eq!(r.status(), 204, "{path}");
        assert_eq!(r.headers()["access-control-allow-origin"], "*", "{path}");
    }
    // Answers: a read, an error, a refusal without a credential, each readable with its headers.
    for (path, status) in [("/api/v1/categories", 200), ("/api/v1/listings/Not-A-Slug", 400), ("/api/v1/me", 401)] {
        let r = send(Method::GET, path).await.unwrap();
        assert_eq!(r.status(), status, "{path}");
        assert_eq!(r.headers()["access-control-allow-origin"], "*", "{path}");
        let exposed = r.headers()["access-control-expose-headers"].to_str().unwrap().to_ascii_lowercase();
        assert!(exposed.contains("ratelimit-remaining") && exposed.contains("retry-after"), "{exposed}");
    }
    // The site's pages and /mcp are not opened to other origins.
    for path in ["/", "/mcp"] {
        let r = send(Method::GET, path).await.unwrap();
        assert_ne!(r.status(), 429, "{path}");
        assert!(r.headers().get("access-control-allow-origin").is_none(), "{path}: {:?}", r.headers());
    }
    // Past the limit (12 a minute here): the 429 is readable too, so a page can wait Retry-After.
    let mut limited = None;
    for _ in 0..10 {
        let r = send(Method::GET, "/api/v1/categories").await.unwrap();
        if r.status() == 429 {
            limited = Some(r);
            break;
        }
    }
    let limited = limited.expect("a 429 within 10 more requests at 12 a minute");
    assert_eq!(limited.headers()["access-control-allow-origin"], "*");
    assert!(limited.headers().contains_key("retry-after"));
}

/// A JSON body with a key given twice is a 400 naming the key (by its path when nested), not read as
/// its last value: JSON leaves a repeated name's meaning open, so another reader of the same body (a
/// proxy, a log) could have acted on the first.
#[tokio::test]
async fn a_json_key_given_twice_is_a_400_naming_it() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let post = |body: &'static str| {
        app.client
            .post(format!("{}/api/v1/drafts", app.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    for (body, field) in [
        (r#"{"url":"https://a.example","url":"https://b.example"}"#, "url"),
        (r#"{"url":"https://a.example","extra":{"k":1,"k":2}}"#, "extra.k"),
    ] {
        let r = post(body).await.unwrap();
        assert_eq!(r.status(), 400, "{body}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error"]["details"][0]["field"], field, "{v}");
        assert_eq!(v["error"]["details"][0]["problem"], "given more than once", "{v}");
    }
    // Once each: the body is read and the operation asks for a credential.
    assert_eq!(post(r#"{"url":"https://a.example"}"#).await.unwrap().status(), 401);
}
