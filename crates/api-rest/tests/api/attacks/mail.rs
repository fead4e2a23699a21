//! Outbound mail as a spam cannon: invites, claim emails and follower updates aimed at one victim from
//! one account or from many, each capped where it must hold.

use crate::claims::{claim, listing, mails_to, setup};
use crate::drafts::maker;
use crate::own::call;
use serde_json::json;

#[tokio::test]
async fn invites_cannot_flood_one_address_or_come_without_end_from_one_account() {
    let site = test_support::FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let mut drafts = Vec::new();
    for _ in 0..3 {
        let id = m.submit(&site.url()).await;
        m.settle(&id).await;
        drafts.push(id);
    }
    let invite = |draft: &str, email: &str| {
        let (m, path, body) = (&m, format!("/drafts/{draft}/invites"), json!({"email": email}));
        async move { m.call("POST", &path, &m.key, Some(body), None).await }
    };
    // One address: three invites a day from anywhere, then nothing more is sent to it.
    assert_eq!(invite(&drafts[0], "victim@acme.example").await.0, 201);
    assert_eq!(invite(&drafts[0], "victim@acme.example").await.0, 201, "a repeat is a send too");
    assert_eq!(invite(&drafts[1], "Victim@acme.example").await.0, 201);
    let (st, e) = invite(&drafts[2], "victim@acme.example").await;
    assert_eq!((st, e["error"]["code"].as_str()), (429, Some("mail_quota")), "{e}");
    let app = bootstrap::App::connect(&m.app.db.url).await.unwrap();
    let sent = domain::ports::Outbox::outbox(app.store.as_ref(), Some("victim@acme.example"), 50).await.unwrap();
    assert_eq!(sent.len(), 3, "the refused invite sent nothing");
    // One account: twenty emails a day, whatever the listings and addresses.
    let mut statuses = Vec::new();
    for n in 0..18 {
        let draft = &drafts[n % 3];
        statuses.push(invite(draft, &format!("person{n}@acme.example")).await.0);
    }
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 17, "{statuses:?}");
    let (st, e) = invite(&drafts[2], "one-more@acme.example").await;
    assert_eq!(st, 429, "{e}");
    assert!(e["error"]["message"].as_str().unwrap().contains("this account"), "{e}");
}

#[tokio::test]
async fn invites_sent_all_at_once_to_one_address_still_stop_at_three() {
    // The same script, its requests sent together: each request's count is taken and read in one
    // step, so they cannot all read the last free place before any of them counts it.
    let site = test_support::FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let draft = m.submit(&site.url()).await;
    m.settle(&draft).await;
    let path = format!("/drafts/{draft}/invites");
    let sends = (0..12).map(|_| m.call("POST", &path, &m.key, Some(json!({"email": "victim@acme.example"})), None));
    let statuses: Vec<u16> = futures_util::future::join_all(sends).await.into_iter().map(|(s, _)| s).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 3, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 9, "{statuses:?}");
    let app = bootstrap::App::connect(&m.app.db.url).await.unwrap();
    let sent = domain::ports::Outbox::outbox(app.store.as_ref(), Some("victim@acme.example"), 50).await.unwrap();
    assert_eq!(sent.len(), 3, "three sent, not more");
    // The nine refused gave back what they had counted against the draft's sends too: seven more of
    // its ten still go out (none would, had they kept them).
    use domain::throttle::mail::INVITE_SENDS_PER_LISTING as PER_DRAFT;
    let mut more = Vec::new();
    for n in 0..PER_DRAFT {
        let body = json!({"email": format!("person{n}@acme.example")});
        more.push(m.call("POST", &path, &m.key, Some(body), None).await.0);
    }
    assert_eq!(more.iter().filter(|s| **s == 201).count() as i64, PER_DRAFT - 3, "{more:?}");
}

#[tokio::test]
async fn claim_emails_to_one_domain_are_capped_across_accounts() {
    let s = setup().await;
    listing(&s, "Orbit Labs", "https://orbit.example", "orbit.example", true).await;
    let body = json!({"slug": "orbit-labs", "method": "email", "email": "admin@orbit.example"});
    for (who, key) in [("ann", &s.ann), ("bob", &s.bob)] {
        let (st, c) = claim(&s, key, body.clone()).await;
        assert_eq!(st, 201, "{who}: {c}");
    }
    let (st, c) =
        claim(&s, &s.ann, json!({"slug": "orbit-labs", "method": "email", "email": "webmaster@orbit.example"})).await;
    assert_eq!(st, 201, "{c}");
    // A fourth claim email to the domain today, from anyone: refused, nothing sent.
    let (st, e) =
        claim(&s, &s.bob, json!({"slug": "orbit-labs", "method": "email", "email": "postmaster@orbit.example"})).await;
    assert_eq!((st, e["error"]["code"].as_str()), (429, Some("mail_quota")), "{e}");
    assert!(mails_to(&s, "postmaster@orbit.example").await.is_empty());
}

#[tokio::test]
async fn followers_get_at_most_three_updates_a_day_from_one_listing() {
    let s = crate::orders::setup().await;
    let id = crate::orders::owned_listing(&s.store, "Chatty", "ann@acme.example").await;
    let post = |n: u32| {
        let (app, key) = (&s.app, s.ann.clone());
        async move {
            let body = json!({"title": format!("News {n}"), "body": "Something happened."});
            call(app, "POST", &format!("/me/listings/{id}/updates"), &key, Some(body)).await
        }
    };
    for n in 0..3 {
        assert_eq!(post(n).await.0, 201, "update {n}");
    }
    let (st, e) = post(3).await;
    assert_eq!((st, e["error"]["code"].as_str()), (429, Some("mail_quota")), "{e}");
}
