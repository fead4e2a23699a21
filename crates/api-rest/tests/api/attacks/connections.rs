//! Connections a script holds open on purpose: a body that never finishes arriving.

use crate::helpers::spawn_app_configured;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends `head` and then `body` a byte at a time, `gap` apart, stopping when the server answers; returns
/// the status line's code, the response's body and how long the answer took from the head. Panics when
/// the server keeps the connection open after its answer.
async fn trickle(addr: &str, head: &str, body: &[u8], gap: Duration) -> (u16, String, Duration) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut got = Vec::new();
    let mut sent = 0;
    let mut buf = [0u8; 4096];
    loop {
        // A byte of the body now and then, until it is all sent; the server's answer ends the loop.
        if sent < body.len() {
            s.write_all(&body[sent..=sent]).await.unwrap();
            sent += 1;
        }
        match tokio::time::timeout(gap, s.read(&mut buf)).await {
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => panic!("reading: {e}"),
            Err(_) => assert!(started.elapsed() < Duration::from_secs(20), "no answer after 20 s"),
        }
    }
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no status: {text:?}"));
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body, took)
}

fn post(path: &str, content_type: &str, length: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\nAccept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// A client that sends a request's head and then its body a byte every 200 ms is answered 408, naming
/// the body, once the body deadline (here 1 s) passes, and its connection is closed, on an operation,
/// the MCP endpoint and a page's form alike. Before, nothing bounded a body's arrival: a request whose
/// body never finished held its connection and its handler for as long as the client liked (70 s and
/// counting when tried by hand), so one address could pile up hundreds of them a minute within its rate
/// limit. A body that does arrive in time, however slowly, is served as ever.
#[tokio::test]
async fn a_body_that_never_finishes_arriving_is_cut_off_at_the_deadline() {
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.body_timeout_secs = 1).await;
    app.wait_ready().await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let slow = Duration::from_millis(200);
    let endless = [b'x'; 4096];
    for (path, content_type) in [
        ("/api/v1/drafts", "application/json"),
        ("/mcp", "application/json"),
        ("/signin", "application/x-www-form-urlencoded"),
    ] {
        let (status, body, took) = trickle(&addr, &post(path, content_type, endless.len()), &endless, slow).await;
        assert_eq!(status, 408, "{path}: {body}");
        let error: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
        assert_eq!(error["error"]["code"], "request_timeout", "{path}");
        assert_eq!(error["error"]["details"][0]["field"], "body", "{path}");
        assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(4), "{path}: answered after {took:?}");
    }
    // A chunked body, which declares no length, is held to the same deadline.
    let chunks = b"1\r\nx\r\n".repeat(700);
    let head = "POST /api/v1/drafts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    let (status, body, took) = trickle(&addr, head, &chunks, slow).await;
    assert_eq!(status, 408, "chunked: {body}");
    assert!(took < Duration::from_secs(4), "chunked: answered after {took:?}");
    // Whole within the deadline, though slowly (10 bytes, 60 ms apart): read and answered by the operation
    // (401: it takes a credential, and reads its body first).
    let whole = br#"{"url":1}"#;
    let (status, body, took) =
        trickle(&addr, &post("/api/v1/drafts", "application/json", whole.len()), whole, Duration::from_millis(60))
            .await;
    assert!(status != 408 && status < 500, "a body in time: {status} {body} after {took:?}");
}
