//! MCP sign-in as the MCP authorization spec describes it, driven the way a client does: the 401 with
//! `resource_metadata`, the metadata documents, dynamic registration, the browser's trip through our
//! sign-in and consent pages, the code exchange with PKCE, a tool call with the access token, refresh
//! rotation with replay detection, and the refusals at each step.

use crate::helpers::{TestApp, spawn_app};
use crate::pages::{Browser, hidden, sign_up};
use base64::Engine;
use serde_json::{Value, json};
use sha2::Digest;

pub(crate) const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K9DcBXXLZxYfY6dWG7GDCrOf7I";
pub(crate) const REDIRECT: &str = "http://127.0.0.1:33333/callback";

pub(crate) fn challenge(v: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(v.as_bytes()))
}

pub(crate) async fn mcp_call(app: &TestApp, token: Option<&str>, tool: &str, args: Value) -> reqwest::Response {
    let mut r = app
        .client
        .post(format!("{}/mcp", app.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(t) = token {
        r = r.header("authorization", format!("Bearer {t}"));
    }
    r.json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": args}}))
        .send()
        .await
        .unwrap()
}

pub(crate) async fn token(app: &TestApp, form: &[(&str, &str)]) -> (u16, Value) {
    let r = app.client.post(format!("{}/oauth/token", app.base)).form(form).send().await.unwrap();
    let s = r.status().as_u16();
    assert_eq!(r.headers()["cache-control"], "no-store");
    (s, r.json().await.unwrap())
}

pub(crate) fn query_param(url: &str, name: &str) -> Option<String> {
    let q = url.split_once('?')?.1;
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| v.replace("%20", " ").replace("%3A", ":"))
    })
}

pub(crate) fn authorize_path(client_id: &str, state: &str, scope: &str, resource: &str) -> String {
    let q = serde_urlencoded::to_string([
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", &challenge(VERIFIER)),
        ("code_challenge_method", "S256"),
        ("state", state),
        ("scope", scope),
        ("resource", resource),
    ])
    .unwrap();
    format!("/oauth/authorize?{q}")
}

#[tokio::test]
async fn from_401_to_a_working_token_and_a_rotated_refresh() {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    let base = app.base.clone();

    // 1. A tool that needs sign-in, called without a credential: 401 that names the metadata and scope.
    let r = mcp_call(&app, None, "list_my_listings", json!({})).await;
    assert_eq!(r.status(), 401);
    let www = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let meta_url = format!("{base}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(www, format!(r#"Bearer resource_metadata="{meta_url}", scope="account:read""#));
    // Public tools need nothing.
    assert_eq!(mcp_call(&app, None, "get_site_info", json!({})).await.status(), 200);
    // A bad credential is 401 invalid_token with the same pointer.
    let r = mcp_call(&app, Some("eyJhbGciOiJIUzI1NiJ9.e30.c2ln"), "get_site_info", json!({})).await;
    assert_eq!(r.status(), 401);
    assert!(r.headers()["www-authenticate"].to_str().unwrap().contains(r#"error="invalid_token""#));

    // 2. Metadata: the resource names the authorization server; that one its endpoints.
    let prm: Value = app.client.get(&meta_url).send().await.unwrap().json().await.unwrap();
    assert_eq!(prm["resource"], format!("{base}/mcp"));
    assert_eq!(prm["authorization_servers"], json!([base]));
    let asm: Value = app.get("/.well-known/oauth-authorization-server").await.json().await.unwrap();
    assert_eq!(asm["issuer"], base);
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(asm["client_id_metadata_document_supported"], true);

    // 3. Dynamic registration; bad metadata refused with the RFC 7591 codes.
    let reg = |body: Value| app.client.post(format!("{base}/oauth/register")).json(&body).send();
    let r = reg(json!({"redirect_uris": ["http://evil.example/cb"]})).await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["error"], "invalid_redirect_uri");
    let r =
        reg(json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"})).await.unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["error"], "invalid_client_metadata");
    let eleven: Vec<String> = (0..11).map(|i| format!("https://app.example/cb{i}")).collect();
    assert_eq!(reg(json!({"redirect_uris": eleven[..10]})).await.unwrap().status(), 201, "10 redirect URIs is the max");
    assert_eq!(reg(json!({"redirect_uris": eleven})).await.unwrap().status(), 400, "11 is one too many");
    let r = reg(json!({"redirect_uris": [REDIRECT], "client_name": "Test Assistant"})).await.unwrap();
    assert_eq!(r.status(), 201);
    let client: Value = r.json().await.unwrap();
    let client_id = client["client_id"].as_str().unwrap().to_owned();

    // 4. The browser: not signed in → sign-in page → back to the consent page.
    let mut b = Browser::new(&app);
    let path = authorize_path(&client_id, "st-1", "account:read listings:write", &format!("{base}/mcp"));
    // A redirect URI the client did not register is never followed.
    let (s, html, loc) = b.get(&path.replace("33333%2Fcallback", "33333%2Fother")).await;
    assert_eq!((s, loc), (400, None), "{html}");
    let (s, _, loc) = b.get(&path).await;
    assert_eq!((s, loc.as_deref()), (303, Some("/signin")));
    let (_, form, _) = b.get("/signup").await;
    let csrf = hidden(&form, "csrf");
    let (s, _, loc) =
        b.post("/signup", &[("email", "oa@acme.example"), ("password", "correct horse 9"), ("csrf", &csrf)]).await;
    assert_eq!((s, loc.as_deref()), (303, Some("/signup/sent")));
    let resume = crate::pages::sign_in_with(&mut b, "oa@acme.example", "correct horse 9").await.unwrap();
    assert!(resume.starts_with("/oauth/resume/"), "sign-in returns to the authorization request: {resume}");
    let (s, _, back) = b.get(&resume).await;
    assert_eq!(s, 303);
    let back = back.unwrap();
    assert!(back.starts_with("/oauth/authorize?"), "{back}");
    let (s, consent, _) = b.get(&back).await;
    assert_eq!(s, 200, "{consent}");
    assert!(
        consent.contains("Test Assistant") && consent.contains("account:read") && consent.contains("listings:write")
    );
    assert!(!consent.contains("orders:write"), "only the scopes asked for are shown");
    // The form carries the request; a forged CSRF token is refused.
    let fields = request_fields(&consent);
    let csrf = hidden(&consent, "csrf");
    let mut form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    form.push(("decision", "allow"));
    let mut forged = form.clone();
    forged.push(("csrf", "forged"));
    assert_eq!(b.post("/oauth/authorize", &forged).await.0, 403);
    form.push(("csrf", &csrf));
    let (s, _, loc) = b.post("/oauth/authorize", &form).await;
    assert_eq!(s, 303);
    let to = loc.unwrap();
    assert!(to.starts_with(&format!("{REDIRECT}?code=")), "{to}");
    assert_eq!(query_param(&to, "state").as_deref(), Some("st-1"));
    let code = query_param(&to, "code").unwrap();

    // 5. The exchange: a wrong verifier fails and spends the code; a second code works.
    let exchange = |code: String, verifier: &'static str| {
        let client_id = client_id.clone();
        let app = &app;
        async move {
            token(
                app,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", REDIRECT),
                    ("client_id", &client_id),
                    ("code_verifier", verifier),
                ],
            )
            .await
        }
    };
    let (s, e) = exchange(code.clone(), "x-wrong-verifier-of-enough-length-0123456789-abc").await;
    assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")));
    // A parameter given twice (RFC 6749 §3.2 forbids it) is refused naming it, not blamed on the media type.
    let (s, e) = token(&app, &[("grant_type", "authorization_code"), ("grant_type", "refresh_token")]).await;
    assert_eq!((s, e["error"].as_str()), (400, Some("invalid_request")), "{e}");
    assert!(e["error_description"].as_str().unwrap().starts_with("grant_type: duplicate field"), "{e}");
    let r = app.client.post(format!("{base}/oauth/token")).json(&json!({"grant_type": "refresh_token"})).send();
    let e: Value = r.await.unwrap().json().await.unwrap();
    assert!(e["error_description"].as_str().unwrap().contains("x-www-form-urlencoded"), "{e}");
    let (s, e) = exchange(code, VERIFIER).await;
    assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")), "a code is single-use: {e}");
    let (_, consent, _) = b.get(&back).await;
    let csrf = hidden(&consent, "csrf");
    let mut form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    form.extend([("decision", "allow"), ("csrf", csrf.as_str())]);
    let (_, _, loc) = b.post("/oauth/authorize", &form).await;
    let code = query_param(&loc.unwrap(), "code").unwrap();
    let (s, t) = exchange(code, VERIFIER).await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(t["token_type"], "Bearer");
    assert_eq!(t["scope"], "account:read listings:write");
    let access = t["access_token"].as_str().unwrap().to_owned();
    let refresh = t["refresh_token"].as_str().unwrap().to_owned();

    // 6. The token works on /mcp, within its scopes; not on the REST API (another audience).
    let r = mcp_call(&app, Some(&access), "list_my_listings", json!({})).await;
    assert_eq!(r.status(), 200);
    let r = mcp_call(&app, Some(&access), "quote_order", json!({"items": [{"product": "launch"}]})).await;
    assert_eq!(r.status(), 403);
    assert!(r.headers()["www-authenticate"].to_str().unwrap().contains(r#"scope="orders:write""#));
    let r = app.client.get(format!("{base}/api/v1/me")).bearer_auth(&access).send().await.unwrap();
    assert_eq!(r.status(), 401, "an MCP token is not a REST token");

    // 7. Refresh rotates; replaying the old refresh token revokes the family.
    let refresh_with = |rt: String| {
        let client_id = client_id.clone();
        let app = &app;
        async move {
            token(app, &[("grant_type", "refresh_token"), ("refresh_token", &rt), ("client_id", &client_id)]).await
        }
    };
    let (s, t2) = refresh_with(refresh.clone()).await;
    assert_eq!(s, 200, "{t2}");
    let refresh2 = t2["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(refresh2, refresh);
    let (s, e) = refresh_with(refresh).await;
    assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")));
    let (s, _) = refresh_with(refresh2).await;
    assert_eq!(s, 400, "the replay revoked the newer token too");

    // 8. Deny sends the person back with access_denied.
    let (_, consent, _) = b.get(&back).await;
    let csrf = hidden(&consent, "csrf");
    let mut form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    form.extend([("decision", "deny"), ("csrf", csrf.as_str())]);
    let (_, _, loc) = b.post("/oauth/authorize", &form).await;
    assert_eq!(query_param(&loc.unwrap(), "error").as_deref(), Some("access_denied"));
    // Without PKCE the client is told so at its redirect URI.
    let no_pkce = path.replace("code_challenge_method=S256", "code_challenge_method=plain");
    let (_, _, loc) = b.get(&no_pkce).await;
    assert_eq!(query_param(&loc.unwrap(), "error").as_deref(), Some("invalid_request"));
}

/// A client that names itself by the URL of its metadata document: the document is fetched through the
/// safe fetcher (here from a fixture site on loopback, which the operator allowed), the consent page
/// names the client and where its metadata came from, and the code is exchanged under that client_id.
/// Without the allow-list the same loopback address is refused before any connection is made.
#[tokio::test]
async fn a_client_id_metadata_document_is_fetched_safely() {
    let db = test_support::sqlite();
    let dir = db.sqlite_dir().unwrap().join("cimd");
    std::fs::create_dir_all(dir.join("oauth")).unwrap();
    let site = test_support::FixtureSite::serve_dir(dir.clone(), "http://127.0.0.1:9").await;
    let client_id = format!("{}oauth/client.json", site.url());
    let doc = json!({
        "client_id": client_id, "client_name": "Document Assistant", "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
    });
    std::fs::write(dir.join("oauth/client.json"), doc.to_string()).unwrap();

    // Without the allow-list: a private address, never contacted; an error page, no redirect.
    let closed = spawn_app(false).await;
    closed.wait_ready().await;
    let mut b = Browser::new(&closed);
    sign_up(&mut b, "cimd-closed@acme.example").await;
    let resource = format!("{}/mcp", closed.base);
    let (s, html, loc) = b.get(&authorize_path(&client_id, "st-c", "account:read", &resource)).await;
    assert_eq!((s, loc), (400, None), "{html}");
    assert!(html.contains("must be https"), "plain http only to an allowed host: {html}");
    let https_id = client_id.replace("http://", "https://");
    let (s, html, loc) = b.get(&authorize_path(&https_id, "st-c", "account:read", &resource)).await;
    assert_eq!((s, loc), (400, None), "{html}");
    assert!(html.contains("private network"), "{html}");
    assert!(site.paths().is_empty(), "the refused address was never contacted: {:?}", site.paths());

    // Allowed: consent names the client and the document; the code is exchanged under that client_id.
    let allowed = site.host_port();
    let open = crate::helpers::spawn_app_configured(db, false, move |a| {
        a.outbound.crawler_allowed_hosts = vec![allowed];
    })
    .await;
    open.wait_ready().await;
    let mut b = Browser::new(&open);
    sign_up(&mut b, "cimd-open@acme.example").await;
    let path = authorize_path(&client_id, "st-o", "account:read", &format!("{}/mcp", open.base));
    let (s, consent, _) = b.get(&path).await;
    assert_eq!(s, 200, "{consent}");
    assert!(consent.contains("Document Assistant") && consent.contains(&client_id), "{consent}");
    assert_eq!(site.paths(), ["/oauth/client.json"], "the document was read once");
    let fields = request_fields(&consent);
    let csrf = hidden(&consent, "csrf");
    let mut form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    form.extend([("decision", "allow"), ("csrf", csrf.as_str())]);
    let (s, _, loc) = b.post("/oauth/authorize", &form).await;
    assert_eq!(s, 303);
    let code = query_param(&loc.unwrap(), "code").unwrap();
    let (s, t) = token(
        &open,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(t["scope"], "account:read");
    // A document that names another client_id is refused.
    let forged = json!({"client_id": "https://other.example/c.json", "redirect_uris": [REDIRECT]});
    std::fs::write(dir.join("oauth/client.json"), forged.to_string()).unwrap();
    let (s, html, loc) = b.get(&path).await;
    assert_eq!((s, loc), (400, None), "{html}");
    assert!(html.contains("another client_id"), "{html}");
}

/// The authorization request the consent form carries in its hidden fields.
pub(crate) fn request_fields(consent: &str) -> Vec<(String, String)> {
    [
        "response_type",
        "client_id",
        "redirect_uri",
        "code_challenge",
        "code_challenge_method",
        "state",
        "scope",
        "resource",
    ]
    .iter()
    .map(|n| ((*n).to_owned(), hidden(consent, n)))
    .collect()
}
