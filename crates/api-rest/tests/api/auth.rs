//! Sign-in on the REST API: keys made by the admin commands, the 401/401/401/403 matrix, and keys
//! never stored in clear.

use crate::helpers::{TestApp, run, spawn_app_configured};
use serde_json::Value;

/// A server on a fresh SQLite file with two accounts and three keys made through the real binary.
struct Keys {
    app: TestApp,
    full: String,
    write_only: String,
    revoked: String,
}

fn last_line(out: &str) -> String {
    out.lines().last().unwrap_or_default().trim().to_owned()
}

async fn setup() -> Keys {
    let db = test_support::sqlite();
    for email in ["ann@acme.example", "bob@acme.example"] {
        let (ok, out, err) = run(&db, &["admin", "create-user", "--email", email, "--password", "correct horse 1"]);
        assert!(ok, "{out}{err}");
    }
    let (ok, _, err) = run(&db, &["admin", "create-user", "--email", "ANN@acme.example", "--password", "another one"]);
    assert!(!ok && err.contains("exists"), "one account per email, whatever the case: {err}");
    let (ok, _, err) = run(&db, &["admin", "create-user", "--email", "cy@acme.example", "--password", "short"]);
    assert!(!ok && err.contains("password"), "{err}");
    let key = |email: &str, scopes: &str| {
        let (ok, out, err) =
            run(&db, &["admin", "create-api-key", "--email", email, "--scopes", scopes, "--name", "t"]);
        assert!(ok, "{out}{err}");
        last_line(&out)
    };
    let full = key("ann@acme.example", "account:read,listings:write,orders:write");
    let write_only = key("ann@acme.example", "listings:write");
    let revoked = key("bob@acme.example", "account:read");
    let (ok, _, err) =
        run(&db, &["admin", "create-api-key", "--email", "nobody@acme.example", "--scopes", "account:read"]);
    assert!(!ok && err.contains("no account"), "{err}");
    let (ok, _, err) = run(&db, &["admin", "create-api-key", "--email", "ann@acme.example", "--scopes", "admin:all"]);
    assert!(!ok && err.contains("scope"), "{err}");

    // Revoke bob's key straight in the store (the account pages come next).
    let app = bootstrap::App::connect(&db.url).await.unwrap();
    let bob = app.store.user_by_email(&domain::user::Email::parse("bob@acme.example").unwrap()).await.unwrap().unwrap();
    let k = app.store.list_api_keys(bob.0.id).await.unwrap().remove(0);
    app.store.revoke_api_key(bob.0.id, k.id, chrono::Utc::now()).await.unwrap();

    let server = spawn_app_configured(db, false, |_| {}).await;
    server.wait_ready().await;
    Keys { app: server, full, write_only, revoked }
}

async fn get(app: &TestApp, path: &str, auth: Option<&str>) -> (u16, Option<String>, Value) {
    let mut req = app.client.get(format!("{}/api/v1{path}", app.base));
    if let Some(a) = auth {
        req = req.header("Authorization", a);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let challenge = r.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned());
    (status, challenge, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_sign_in_matrix_on_get_account() {
    let k = setup().await;
    let app = &k.app;
    assert!(k.full.starts_with("ldk_") && k.full.len() == 42, "{}", k.full);

    let (s, c, body) = get(app, "/me", None).await;
    assert_eq!((s, c.as_deref(), body["error"]["code"].as_str()), (401, Some("Bearer"), Some("unauthenticated")));

    // Malformed, a one-character typo, unknown but well-formed, revoked: the same 401 invalid_token.
    let mut typo = k.full.clone().into_bytes();
    typo[10] = if typo[10] == b'a' { b'b' } else { b'a' };
    let typo = String::from_utf8(typo).unwrap();
    let unknown = {
        let mut bytes = [7u8; 32];
        bytes[0] = 1;
        domain::auth::ApiKeyToken::from_random(&bytes).as_str().to_owned()
    };
    for bad in [
        "Basic YW5uOnB3".to_owned(),
        "Bearer".to_owned(),
        "Bearer not-a-key".to_owned(),
        format!("Bearer {typo}"),
        format!("Bearer {unknown}"),
        format!("Bearer {}", k.revoked),
    ] {
        let (s, c, body) = get(app, "/me", Some(&bad)).await;
        assert_eq!(s, 401, "{bad}");
        assert!(c.unwrap_or_default().starts_with(r#"Bearer error="invalid_token""#), "{bad}");
        assert_eq!(body["error"]["code"], "invalid_token", "{bad}");
    }

    let (s, c, body) = get(app, "/me", Some(&format!("Bearer {}", k.write_only))).await;
    assert_eq!(s, 403);
    assert_eq!(c.as_deref(), Some(r#"Bearer error="insufficient_scope", scope="account:read""#));
    assert_eq!(body["error"]["code"], "insufficient_scope");

    let (s, _, me) = get(app, "/me", Some(&format!("bearer {}", k.full))).await;
    assert_eq!(s, 200, "{me}");
    assert_eq!(me["user"]["email"], "ann@acme.example");
    assert_eq!(me["access"]["via"], "api_key");
    assert_eq!(me["access"]["scopes"], serde_json::json!(["account:read", "listings:write", "orders:write"]));
    assert_eq!(me["access"]["api_key"]["prefix"], &k.full[..12]);
    assert_eq!(me["limits"]["requests_per_minute"], 600);
    assert!(!me.to_string().contains(&k.full[12..]), "the secret part is never returned");

    // Public operations: anonymous and valid credentials alike; an invalid credential is still a 401.
    assert_eq!(get(app, "/site", None).await.0, 200);
    assert_eq!(get(app, "/site", Some(&format!("Bearer {}", k.write_only))).await.0, 200);
    assert_eq!(get(app, "/site", Some(&format!("Bearer {}", k.revoked))).await.0, 401);
    assert_eq!(get(app, "/site", Some("Bearer ldk_nope")).await.0, 401);
}

#[tokio::test]
async fn keys_are_stored_only_as_hashes() {
    let k = setup().await;
    let (s, _, _) = get(&k.app, "/me", Some(&format!("Bearer {}", k.full))).await;
    assert_eq!(s, 200);
    let path = k.app.db.url.trim_start_matches("sqlite://").split('?').next().unwrap().to_owned();
    // Every byte the database holds, WAL included: no key appears in clear.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend(std::fs::read(format!("{path}-wal")).unwrap_or_default());
    for key in [&k.full, &k.write_only, &k.revoked] {
        let secret = &key.as_bytes()[12..];
        assert!(!bytes.windows(secret.len()).any(|w| w == secret), "key {} found in the database", &key[..12]);
        assert!(bytes.windows(12).any(|w| w == &key.as_bytes()[..12]), "the shown part is kept");
    }
}
