//! Secrets: the token-signing key is not in the database a backup or a SQL injection would expose,
//! rotation keeps tokens working, secret links stay out of logs, and passwords out of the process list.

use crate::attacks::oauth::{allow, register};
use crate::helpers::{Binary, spawn_app_configured, wait_ready};
use crate::oauth::REDIRECT;
use crate::pages::{Browser, sign_in_with, sign_up};
use sea_orm::ConnectionTrait;
use std::time::Duration;

async fn count(url: &str, sql: &str) -> i64 {
    let app = bootstrap::App::connect(url).await.unwrap();
    let row = app
        .sea_orm()
        .connection()
        .query_one_raw(sea_orm::Statement::from_string(app.sea_orm().backend(), sql.to_owned()))
        .await
        .unwrap()
        .unwrap();
    row.try_get::<i64>("", "n").unwrap()
}

#[tokio::test]
async fn the_signing_secret_is_not_in_the_database_and_its_generated_file_is_private() {
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let client = register(&app, REDIRECT, "Key Test").await;
    let mut b = Browser::new(&app);
    sign_up(&mut b, "kim@acme.example").await;
    let t = allow(&app, &mut b, &client).await;
    let access = t["access_token"].as_str().unwrap();
    use base64::Engine;
    let head = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(access.split('.').next().unwrap()).unwrap();
    let header: serde_json::Value = serde_json::from_slice(&head).unwrap();
    assert_eq!(header["kid"].as_str().map(str::len), Some(16), "tokens name their key: {header}");
    assert_eq!(count(&app.db.url, "SELECT COUNT(*) AS n FROM server_secrets").await, 0, "no secret in the database");
    let file = app.db.sqlite_dir().unwrap().join(bootstrap::keys::SECRET_FILE);
    let meta = std::fs::metadata(&file).expect("generated beside the database on first start");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
}

#[tokio::test]
async fn tokens_signed_before_a_rotation_still_verify_and_others_do_not() {
    const OLD: &str = "the-old-root-secret-of-at-least-32-chars";
    const NEW: &str = "the-new-root-secret-of-at-least-32-chars";
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.secrets.secret_key = Some(OLD.into())).await;
    app.wait_ready().await;
    let client = register(&app, REDIRECT, "Rotation").await;
    let mut b = Browser::new(&app);
    sign_up(&mut b, "rot@acme.example").await;
    let access = allow(&app, &mut b, &client).await["access_token"].as_str().unwrap().to_owned();
    // The issuer is part of the check, so verify as the same public URL the token came from.
    let same_url = |key: &str, previous: Option<&str>| {
        let (url, access, base) = (app.db.url.clone(), access.clone(), app.base.clone());
        let args = bootstrap::keys::SecretArgs {
            secret_key: Some(key.into()),
            secret_key_previous: previous.map(str::to_owned),
            ..Default::default()
        };
        async move {
            let other = bootstrap::App::open(bootstrap::Setup {
                public_url: base,
                secrets: args,
                ..bootstrap::Setup::new(&url)
            })
            .await
            .unwrap();
            operations::authenticate(&other, &access, operations::oauth::Audience::Mcp).await.is_ok()
        }
    };
    assert!(same_url(OLD, None).await, "the key it was signed with");
    assert!(same_url(NEW, Some(OLD)).await, "after a rotation, by its kid");
    assert!(!same_url(NEW, None).await, "once the previous key is dropped");
    assert!(!same_url("someone-elses-root-secret-of-32-chars!!", None).await);
}

#[tokio::test]
async fn claim_and_invite_links_never_reach_the_request_log() {
    let db = test_support::sqlite();
    let mut server = Binary::serve_with(&db, &[], &[("RUST_LOG", "info")]);
    let client = reqwest::Client::new();
    assert!(wait_ready(&client, &server.base, Duration::from_secs(30)).await.is_some());
    let secret = "c0ffee".repeat(10);
    for path in [format!("/claims/confirm/{secret}"), format!("/invites/{secret}"), format!("/oauth/resume/{secret}")] {
        client.get(format!("{}{path}", server.base)).send().await.unwrap();
    }
    let log = server.stop_and_read_stderr();
    assert!(log.contains("/claims/confirm/[redacted]") && log.contains("/invites/[redacted]"), "{log}");
    assert!(!log.contains(&secret), "a working link was logged");
}

#[tokio::test]
async fn a_password_can_be_given_on_standard_input_and_the_flag_warns() {
    use std::io::Write;
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let url = app.db.url.clone();
    // Off the test's runtime, so the in-process server keeps running while the command waits on it.
    let out = tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_launchdir-api"))
            .args(["admin", "create-user", "--email", "stdin@acme.example", "--password-stdin"])
            .env("DATABASE_URL", url)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(b"from standard input 1\n").unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
    let mut b = Browser::new(&app);
    sign_in_with(&mut b, "stdin@acme.example", "from standard input 1").await;
    let out = crate::helpers::cli(
        &app.db.url,
        &["admin", "create-user", "--email", "flag@acme.example", "--password", "visible to ps 1"],
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("visible to other users"), "{err}");
}
