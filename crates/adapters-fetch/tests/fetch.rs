//! The safe fetcher against loopback servers: a fixture site (exempted as an operator would exempt an
//! intranet host) and a canary on loopback that must receive no connection from any SSRF vector.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use adapters_fetch::{FetchError, Robots, SafeFetcher};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A tiny HTTP/1.1 server: path → (status, extra headers, body). Records the paths asked for and counts
/// connections.
struct Site {
    port: u16,
    connections: Arc<AtomicUsize>,
    paths: Arc<Mutex<Vec<String>>>,
}

type Routes = HashMap<&'static str, (u16, Vec<(&'static str, String)>, Vec<u8>)>;

async fn serve(routes: Routes) -> Site {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (connections, paths) = (Arc::new(AtomicUsize::new(0)), Arc::new(Mutex::new(Vec::new())));
    let (c, p, routes) = (connections.clone(), paths.clone(), Arc::new(routes));
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            c.fetch_add(1, Ordering::SeqCst);
            let (p, routes) = (p.clone(), routes.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut n = 0;
                while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf[n..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => n += k,
                    }
                }
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                p.lock().unwrap().push(path.clone());
                let (status, headers, body) =
                    routes.get(path.as_str()).cloned().unwrap_or((404, vec![], b"not found".to_vec()));
                let mut out = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                let _ = sock.write_all(out.as_bytes()).await;
                let _ = sock.write_all(&body).await;
            });
        }
    });
    Site { port, connections, paths }
}

fn html(body: &str) -> (u16, Vec<(&'static str, String)>, Vec<u8>) {
    (200, vec![("Content-Type", "text/html; charset=utf-8".into())], body.as_bytes().to_vec())
}

#[tokio::test]
async fn no_ssrf_vector_reaches_the_canary() {
    let canary = serve(HashMap::from([("/", html("secret"))])).await;
    let c = canary.port;
    let fixture = serve(HashMap::from([
        ("/to-canary", (302, vec![("Location", format!("http://127.0.0.1:{c}/"))], vec![])),
        ("/to-localhost", (301, vec![("Location", format!("http://localhost:{c}/"))], vec![])),
        ("/to-mapped", (307, vec![("Location", format!("http://[::ffff:127.0.0.1]:{c}/"))], vec![])),
        ("/to-decimal", (308, vec![("Location", format!("http://2130706433:{c}/"))], vec![])),
        ("/to-metadata", (302, vec![("Location", "http://169.254.169.254/latest/meta-data/".into())], vec![])),
    ]))
    .await;
    let f = fixture.port;
    let fetcher = SafeFetcher::new("launchdir-test", [format!("127.0.0.1:{f}")]).unwrap();
    let vectors = [
        format!("http://127.0.0.1:{c}/"),
        format!("http://localhost:{c}/"),
        format!("http://LOCALHOST:{c}/"),
        format!("http://2130706433:{c}/"),
        format!("http://0x7f000001:{c}/"),
        format!("http://0x7f.0.0.1:{c}/"),
        format!("http://0177.0.0.1:{c}/"),
        format!("http://127.1:{c}/"),
        format!("http://127.0.0.1.:{c}/"),
        format!("http://[::1]:{c}/"),
        format!("http://[::ffff:127.0.0.1]:{c}/"),
        format!("http://[::ffff:7f00:1]:{c}/"),
        format!("http://[::127.0.0.1]:{c}/"),
        format!("http://[64:ff9b::7f00:1]:{c}/"),
        format!("http://[2002:7f00:1::1]:{c}/"),
        format!("http://0.0.0.0:{c}/"),
        format!("http://0:{c}/"),
        format!("https://127.0.0.1:{c}/"),
        format!("http://user:pw@127.0.0.1:{c}/"),
        format!("ftp://127.0.0.1:{c}/"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/".to_owned(),
        "http://192.168.0.1/".to_owned(),
        "http://100.64.0.1/".to_owned(),
        "http://[fe80::1]/".to_owned(),
        "http://[fd00:ec2::254]/".to_owned(),
        format!("http://127.0.0.1:{f}/to-canary"),
        format!("http://127.0.0.1:{f}/to-localhost"),
        format!("http://127.0.0.1:{f}/to-mapped"),
        format!("http://127.0.0.1:{f}/to-decimal"),
        format!("http://127.0.0.1:{f}/to-metadata"),
    ];
    assert!(vectors.len() >= 20);
    for v in &vectors {
        let r = fetcher.get(v).await;
        assert!(
            matches!(
                r,
                Err(FetchError::NotPublic(_) | FetchError::Credentials | FetchError::Scheme | FetchError::Port(_))
            ),
            "{v}: {r:?}"
        );
    }
    assert_eq!(canary.connections.load(Ordering::SeqCst), 0, "the canary was reached");
}

#[tokio::test]
async fn pages_redirects_limits_and_robots() {
    let big = vec![b'a'; 1024 * 1024 + 1];
    let site = serve(HashMap::from([
        ("/", html("<h1>Acme</h1>")),
        ("/old", (301, vec![("Location", "/".into())], vec![])),
        ("/loop", (302, vec![("Location", "/loop".into())], vec![])),
        ("/big", (200, vec![("Content-Type", "text/html".into())], big)),
        ("/data.json", (200, vec![("Content-Type", "application/json".into())], b"{}".to_vec())),
        (
            "/robots.txt",
            (
                200,
                vec![],
                b"User-agent: launchdir\nDisallow: /private\nDisallow: /*.pdf$\nAllow: /private/ok\n".to_vec(),
            ),
        ),
    ]))
    .await;
    let base = format!("http://127.0.0.1:{}", site.port);
    let fetcher = SafeFetcher::new("launchdir-test", [format!("127.0.0.1:{}", site.port)]).unwrap();

    let home = fetcher.get(&format!("{base}/")).await.unwrap();
    assert!(home.is_html() && home.status == 200 && home.body == b"<h1>Acme</h1>");
    let moved = fetcher.get(&format!("{base}/old")).await.unwrap();
    assert_eq!(moved.url.path(), "/");
    assert_eq!(fetcher.get(&format!("{base}/loop")).await.unwrap_err(), FetchError::TooManyRedirects);
    assert_eq!(fetcher.get(&format!("{base}/big")).await.unwrap_err(), FetchError::TooLarge);
    assert!(!fetcher.get(&format!("{base}/data.json")).await.unwrap().is_html());

    let robots = Robots::fetch(&fetcher, &url::Url::parse(&base).unwrap()).await;
    let allowed = |p: &str| robots.allows(&url::Url::parse(&format!("{base}{p}")).unwrap());
    assert!(allowed("/") && allowed("/pricing") && allowed("/private/ok"));
    assert!(!allowed("/private") && !allowed("/private/x") && !allowed("/private.html") && !allowed("/a/b.pdf"));
    assert!(allowed("/a/b.pdf?x=1"), "$ anchors the end of the path");
}

#[tokio::test]
async fn robots_txt_status_rules() {
    // 4xx: everything allowed; 5xx and unreachable: nothing allowed (RFC 9309 2.3.1).
    let missing = serve(HashMap::new()).await;
    let broken = serve(HashMap::from([("/robots.txt", (503, vec![], b"down".to_vec()))])).await;
    let fetcher = SafeFetcher::new(
        "launchdir-test",
        [format!("127.0.0.1:{}", missing.port), format!("127.0.0.1:{}", broken.port), "127.0.0.1:9".to_owned()],
    )
    .unwrap();
    let origin = |p: u16| url::Url::parse(&format!("http://127.0.0.1:{p}/")).unwrap();
    assert!(Robots::fetch(&fetcher, &origin(missing.port)).await.allows(&origin(missing.port)));
    assert!(!Robots::fetch(&fetcher, &origin(broken.port)).await.allows(&origin(broken.port)));
    assert!(!Robots::fetch(&fetcher, &origin(9)).await.allows(&origin(9)));
    assert_eq!(missing.paths.lock().unwrap().as_slice(), ["/robots.txt"]);
}

#[tokio::test]
async fn claim_reads_head_meta_and_well_known_files_within_the_site() {
    use adapters_fetch::SiteCrawler;
    use domain::ports::{SiteError, SiteReader};
    let canary =
        serve(HashMap::from([("/.well-known/launchdir-verification.txt", (200, vec![], b"x".to_vec()))])).await;
    let c = canary.port;
    let file = "/.well-known/launchdir-verification.txt";
    let site = serve(HashMap::from([
        (
            "/",
            html(
                r#"<html><head><meta name="Launchdir-Verification" content="abc"></head>
                <body><meta name="launchdir-verification" content="from-a-comment"></body></html>"#,
            ),
        ),
        ("/robots.txt", (200, vec![], b"User-agent: *\nDisallow: /\n".to_vec())),
        ("/moved.txt", (301, vec![("Location", file.into())], vec![])),
        (file, (200, vec![("Content-Type", "text/plain".into())], b"launchdir-verification=abc\n".to_vec())),
        ("/elsewhere.txt", (302, vec![("Location", format!("http://127.0.0.1:{c}{file}"))], vec![])),
    ]))
    .await;
    let base = format!("http://127.0.0.1:{}", site.port);
    let reader = SiteCrawler::new(SafeFetcher::new("launchdir-test", [format!("127.0.0.1:{}", site.port)]).unwrap());
    // robots.txt disallows everything: the homepage is not read, the well-known file is.
    assert_eq!(reader.read_homepage(&format!("{base}/")).await.unwrap_err(), SiteError::RobotsForbid);
    assert_eq!(reader.read_file(&format!("{base}{file}")).await.unwrap(), "launchdir-verification=abc\n");
    assert_eq!(reader.read_file(&format!("{base}/moved.txt")).await.unwrap(), "launchdir-verification=abc\n");
    assert!(matches!(reader.read_file(&format!("{base}/elsewhere.txt")).await, Err(SiteError::OffSite(_))));
    assert_eq!(reader.read_file(&format!("{base}/missing.txt")).await.unwrap_err(), SiteError::Status(404));
    assert_eq!(canary.connections.load(Ordering::SeqCst), 0);

    let open = serve(HashMap::from([(
        "/",
        html(
            r#"<html><head><meta name="Launchdir-Verification" content="abc"></head>
            <body><meta name="launchdir-verification" content="from-a-comment"></body></html>"#,
        ),
    )]))
    .await;
    let reader = SiteCrawler::new(SafeFetcher::new("launchdir-test", [format!("127.0.0.1:{}", open.port)]).unwrap());
    let home = reader.read_homepage(&format!("http://127.0.0.1:{}/", open.port)).await.unwrap();
    assert_eq!(
        home.meta,
        [("launchdir-verification".to_owned(), "abc".to_owned())],
        "the head only, names lower-cased"
    );
}
