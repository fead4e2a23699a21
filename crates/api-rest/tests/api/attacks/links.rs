//! Emailed links that mail gateways open on arrival (Safe Links, Proofpoint, Mimecast fetch every link
//! in a message): a claim link or a co-founder invite must change nothing for a cookie-less GET or
//! HEAD, nor for another signed-in account; only the person it is for, signed in, completes it.

use crate::claims::{PUBLIC, claim, listing, mails_to, owns, setup};
use crate::pages::{Browser, hidden, sign_in};
use serde_json::json;

#[tokio::test]
async fn a_mail_scanner_opening_a_claim_link_does_not_hand_over_the_listing() {
    let s = setup().await;
    let id = listing(&s, "Orbit Labs", "https://orbit.example", "orbit.example", true).await;
    let (st, c) =
        claim(&s, &s.bob, json!({"slug": "orbit-labs", "method": "email", "email": "admin@orbit.example"})).await;
    assert_eq!(st, 201, "{c}");
    let mail = mails_to(&s, "admin@orbit.example").await;
    let link = mail[0].split_whitespace().find(|w| w.starts_with(&format!("{PUBLIC}/claims/confirm/"))).unwrap();
    let path = link.strip_prefix(PUBLIC).unwrap().to_owned();
    let url = format!("{}{path}", s.app.base);

    // The scanner: no cookie, GET and HEAD, several times.
    for _ in 0..3 {
        let r = s.app.client.get(&url).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.text().await.unwrap().contains("Sign in to confirm"));
        assert_ne!(s.app.client.head(&url).send().await.unwrap().status(), 500);
    }
    assert!(!owns(&s, &s.bob, id).await, "a cookie-less open verified the claim");

    // Someone signed in as another account.
    let mut carol = Browser::new(&s.app);
    sign_in(&mut carol, "carol@orbit.example").await;
    let (st, page, _) = carol.get(&path).await;
    assert_eq!(st, 403, "{page}");
    assert!(!owns(&s, &s.bob, id).await && !owns(&s, &s.carol, id).await);

    // The claimant: opens it signed out, signs in, comes back to the link, and it verifies.
    let mut bob = Browser::new(&s.app);
    let (st, page, _) = bob.get(&path).await;
    assert!(st == 200 && page.contains("Sign in to confirm"), "{page}");
    let back = sign_in(&mut bob, "bob@other.example").await;
    assert_eq!(back.as_deref(), Some(format!("{PUBLIC}{path}").as_str()), "sign-in returns to the link");
    let (st, page, _) = bob.get(&path).await;
    assert!(st == 200 && page.contains("Claim verified"), "{page}");
    assert!(owns(&s, &s.bob, id).await);
}

#[tokio::test]
async fn a_mail_scanner_opening_an_invite_link_does_not_make_anyone_a_cofounder() {
    use sea_orm::ConnectionTrait;
    let site = test_support::FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let m = crate::drafts::maker(vec![site.host_port()]).await;
    let id = m.submit(&site.url()).await;
    m.settle(&id).await;
    let (st, saved) = m.call("POST", &format!("/drafts/{id}/submit"), &m.key, None, None).await;
    assert_eq!(st, 200, "{saved}");
    let invite = json!({"email": "cy@acme.example"});
    assert_eq!(m.call("POST", &format!("/drafts/{id}/invites"), &m.key, Some(invite), None).await.0, 201);
    let app = bootstrap::App::connect(&m.app.db.url).await.unwrap();
    let mail = domain::ports::Outbox::outbox(app.store.as_ref(), Some("cy@acme.example"), 1).await.unwrap().remove(0);
    let link = mail.body.lines().find(|l| l.contains("/invites/")).unwrap().trim().to_owned();
    let owners = || async {
        let sql = format!("SELECT COUNT(*) AS n FROM listing_owners WHERE listing_id = {}", saved["listing_id"]);
        let row = app
            .sea_orm()
            .connection()
            .query_one_raw(sea_orm::Statement::from_string(app.sea_orm().backend(), sql))
            .await
            .unwrap()
            .unwrap();
        row.try_get::<i64>("", "n").unwrap()
    };
    for _ in 0..3 {
        assert_eq!(m.app.client.get(&link).send().await.unwrap().status(), 200);
        assert_ne!(m.app.client.head(&link).send().await.unwrap().status(), 500);
        // A POST without a session is sent back to the link (303), never accepted.
        let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        assert_eq!(plain.post(&link).form(&[("csrf", "x")]).send().await.unwrap().status(), 303);
    }
    assert_eq!(owners().await, 1, "only the maker");
    // Another signed-in account cannot accept it, even with its own valid form token.
    let mut bob = Browser::new(&m.app);
    sign_in(&mut bob, "bob@acme.example").await;
    let path = link.strip_prefix(&m.app.base).unwrap().to_owned();
    let (_, html, _) = bob.get(&path).await;
    assert!(html.contains("Sign out and sign in with the invited address"), "{html}");
    let (_, keys, _) = bob.get("/account/api-keys").await;
    let (st, _, _) = bob.post(&path, &[("csrf", &hidden(&keys, "csrf"))]).await;
    assert_eq!(st, 403);
    assert_eq!(owners().await, 1);
}
