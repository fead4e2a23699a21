//! SMTP delivery against a local sink.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use adapters_mail::SmtpSender;
use domain::ports::{MailSender, OutboxEmail};
use test_support::SmtpSink;

#[tokio::test]
async fn an_email_reaches_the_smtp_server() {
    let sink = SmtpSink::start().await;
    let sender = SmtpSender::new(&sink.url(), "launchdir <no-reply@launch.test>").unwrap();
    let email = OutboxEmail {
        id: 1,
        to: "cy@acme.example".into(),
        subject: "Join Acme Rockets on launchdir".into(),
        body: "Open this link:\nhttp://launch.test/invites/abc\n".into(),
        created_at: chrono::Utc::now(),
        sent_at: None,
        attempts: 0,
        last_error: None,
    };
    sender.send(&email).await.unwrap();
    let got = sink.messages();
    assert_eq!(got.len(), 1);
    assert!(got[0].contains("To: cy@acme.example"), "{}", got[0]);
    assert!(got[0].contains("Subject: Join Acme Rockets on launchdir"));
    assert!(got[0].contains("http://launch.test/invites/abc"));
}

#[tokio::test]
async fn an_unreachable_server_is_an_error_not_a_silent_success() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let sender = SmtpSender::new(&format!("smtp://127.0.0.1:{port}"), "a@launch.test").unwrap();
    let email = OutboxEmail {
        id: 1,
        to: "cy@acme.example".into(),
        subject: "s".into(),
        body: "b".into(),
        created_at: chrono::Utc::now(),
        sent_at: None,
        attempts: 0,
        last_error: None,
    };
    assert!(sender.send(&email).await.unwrap_err().contains("SMTP"));
    assert!(SmtpSender::new("ftp://x", "a@b.test").is_err());
}
