//! `launchdir-mcp stdio` as a local MCP client runs it: JSON-RPC lines on stdin/stdout, signed in with
//! the API key in LAUNCHDIR_API_KEY (its scopes apply); a bad key stops it before it serves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

async fn key_for(db: &test_support::TestDatabase, scopes: &[domain::user::Scope]) -> String {
    let app = bootstrap::App::connect(&db.url).await.unwrap();
    app.start(false).await.unwrap();
    let n = scopes.len();
    let user = operations::accounts::create_user(&app, &format!("st{n}@acme.example"), "correct horse 1", "", false)
        .await
        .unwrap();
    let (_, key) = operations::accounts::create_api_key(&app, user.id, "stdio", scopes).await.unwrap();
    key.as_str().to_owned()
}

fn session(db_url: &str, key: &str, requests: &[Value]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_launchdir-mcp"))
        .args(["stdio", "--database-url", db_url])
        .env("LAUNCHDIR_API_KEY", key)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for r in requests {
        writeln!(stdin, "{r}").unwrap();
        stdin.flush().unwrap();
        if r.get("id").is_none() {
            continue; // a notification has no answer
        }
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        answers.push(serde_json::from_str(&line).unwrap());
    }
    drop(stdin);
    let _ = child.wait();
    answers
}

#[tokio::test]
async fn stdio_serves_the_tools_as_the_key_holder() {
    let db = test_support::sqlite();
    let key = key_for(&db, &[domain::user::Scope::AccountRead]).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let url = db.url.clone();
    let answers = tokio::task::spawn_blocking(move || {
        session(
            &url,
            &key,
            &[
                init,
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
                json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_account", "arguments": {}}}),
                json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "quote_order",
                    "arguments": {"items": [{"product": "launch"}]}}}),
            ],
        )
    })
    .await
    .unwrap();
    assert_eq!(answers[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(answers[1]["result"]["tools"].as_array().unwrap().len(), operations::registry().len());
    let account = &answers[2]["result"]["structuredContent"];
    assert_eq!(account["user"]["email"], "st1@acme.example", "{}", answers[2]);
    assert_eq!(account["access"]["via"], "api_key");
    // The key lacks orders:write: a tool error the model can read, not a protocol failure.
    assert_eq!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    assert_eq!(answers[3]["result"]["structuredContent"]["error"]["code"], "insufficient_scope");
}

#[test]
fn stdio_refuses_a_bad_key_before_serving() {
    let db = test_support::sqlite();
    let out = Command::new(env!("CARGO_BIN_EXE_launchdir-mcp"))
        .args(["stdio", "--database-url", &db.url])
        .env("LAUNCHDIR_API_KEY", "ldk_not-a-key")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("LAUNCHDIR_API_KEY"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "nothing but MCP ever goes to stdout");
}
