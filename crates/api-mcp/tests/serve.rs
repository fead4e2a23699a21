//! `launchdir-mcp serve` as an operator runs it: migrates, seeds, lists the tools at /mcp, rate-limits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

#[tokio::test]
async fn serve_lists_every_operation_as_a_tool() {
    let db = test_support::sqlite();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_launchdir-mcp"))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--database-url", &db.url, "--rate-limit", "3"])
        .env("RUST_LOG", "warn")
        .spawn()
        .unwrap();
    let client = reqwest::Client::new();
    let started = Instant::now();
    let body = loop {
        let r = client
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#)
            .send()
            .await;
        if let Ok(r) = r
            && r.status() == 200
        {
            break r.text().await.unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(20), "launchdir-mcp did not answer");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // The standalone server enforces the same rate limit as launchdir-api: 3 a minute here, one used.
    let post = || {
        client
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#)
            .send()
    };
    let statuses = [post().await.unwrap(), post().await.unwrap(), post().await.unwrap()];
    let _ = child.kill();
    let _ = child.wait();
    let codes: Vec<u16> = statuses.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(codes, [200, 200, 429]);
    assert_eq!(statuses[1].headers()["ratelimit-remaining"], "0");
    assert!(statuses[2].headers().contains_key("retry-after"));
    let json = body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&body);
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["result"]["tools"].as_array().unwrap().len(), operations::registry().len());
}
