//! The resolver against a real DNS server on loopback (test-support's): every TXT record comes back
//! with its strings joined, a name without records is an empty answer, and nothing is cached.

use adapters_dns::HickoryDns;
use domain::ports::DnsResolver;
use test_support::DnsServer;

#[tokio::test]
async fn every_txt_record_is_read_fresh_from_the_configured_server() {
    let server = DnsServer::start().await;
    let dns = HickoryDns::with_server(server.addr).unwrap();
    let name = "_launchdir-challenge.acme.example";
    assert_eq!(dns.txt(name).await.unwrap(), Vec::<String>::new(), "no records yet: an empty answer");
    server.set_txt(name, &[&["v=spf1 -all"], &["launchdir-verification=", "abc123"]]);
    let mut got = dns.txt(name).await.unwrap();
    got.sort();
    assert_eq!(got, ["launchdir-verification=abc123", "v=spf1 -all"], "both records, strings joined");
    server.set_txt(name, &[&["launchdir-verification=def456"]]);
    assert_eq!(dns.txt(&format!("{name}.")).await.unwrap(), ["launchdir-verification=def456"], "not cached");
    assert_eq!(server.questions().iter().filter(|q| q.as_str() == name).count(), 3);
}

#[tokio::test]
async fn a_server_that_does_not_answer_is_an_error_naming_it() {
    // A bound UDP socket that never answers.
    let silent = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let dns = HickoryDns::with_server(silent.local_addr().unwrap()).unwrap();
    let e = dns.txt("acme.example").await.unwrap_err();
    assert!(e.0.contains(&silent.local_addr().unwrap().to_string()), "{e}");
}
