//! Drafts, invites and the outbox on both databases: the whole draft document round-trips, saves are
//! compare-and-set, submitting races create one listing, invites stop at ten, the outbox filters.

use crate::on_every_store;
use chrono::{NaiveDate, TimeZone, Utc};
use domain::draft::{
    Competitor, Draft, DraftFaq, DraftField, DraftFounder, Evidence, FieldValue, Proposal, Seo, SiteText, SiteUrl,
};
use domain::founder::FounderEntry;
use domain::ids::{DraftId, UserId};
use domain::listing::{Lifecycle, ListingProfile, NewListing};
use domain::paging::PageRequest;
use domain::ports::{NewUser, RepoError};
use domain::sections::{Milestone, Story};
use domain::slug::Slug;
use domain::social::{Faq, Socials};
use domain::user::Email;

async fn user(store: &std::sync::Arc<dyn domain::ports::Store>, email: &str) -> UserId {
    let new = NewUser {
        email: Email::parse(email).unwrap(),
        password_hash: "x".into(),
        display_name: String::new(),
        is_admin: false,
        verified: true,
    };
    store.create_user(new, Utc::now()).await.unwrap().id
}

fn rich_draft(owner: UserId) -> Draft {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap();
    let mut d = Draft::new(DraftId::new_random(), owner, SiteUrl::parse("url", "acme.example").unwrap(), now);
    let site = SiteText::new([(
        "https://acme.example/".to_owned(),
        "Acme builds rockets for cats. Founded in 2019.".to_owned(),
    )]);
    let ev = |q: &str| vec![Evidence { quote: q.into(), url: "https://acme.example/".into() }];
    d.profile.apply_ai(
        DraftField::Name,
        Some(Proposal { value: FieldValue::Text("Acme".into()), evidence: ev("Acme") }),
        &site,
    );
    d.profile.apply_ai(
        DraftField::Features,
        Some(Proposal {
            value: FieldValue::List(vec!["rockets".into(), "cats".into()]),
            evidence: ev("rockets for cats"),
        }),
        &site,
    );
    d.profile.apply_ai(DraftField::City, None, &site);
    d.profile.set_by_user(DraftField::Tagline, FieldValue::Text("Cat rockets".into())).unwrap();
    d.profile.lock(DraftField::Tagline);
    d.profile.remove(DraftField::Stage);
    let x = &mut d.extras;
    x.faqs = vec![DraftFaq { faq: Faq::parse("Safe?".into(), "Yes.".into()).unwrap(), evidence: ev("Acme") }];
    x.founders = vec![DraftFounder {
        founder: FounderEntry::parse("Ann".into(), Some("CEO".into()), None).unwrap(),
        evidence: vec![],
    }];
    x.founders_by_user = true;
    x.company_socials = Socials::parse("s", [("github".to_owned(), "https://github.com/acme".to_owned())]).unwrap();
    x.story = Story::parse("story", [("why_started".to_owned(), "Cats.".to_owned())], 8000).unwrap();
    x.milestones =
        vec![Milestone::parse("2024-01-02", "Launch".into(), None, Some("https://acme.example/l".into())).unwrap()];
    x.seo = Seo::parse(Some("Acme".into()), Some("Rockets for cats".into())).unwrap();
    let mut rival = Competitor::reading("https://rival.example/".into());
    rival.failed("unreachable".into()).unwrap();
    x.competitor = Some(rival);
    x.regenerating = vec![DraftField::Name];
    d.crawled().unwrap();
    d.drafted().unwrap();
    d
}

fn listing_of(d: &Draft, name: &str) -> NewListing {
    let profile = ListingProfile::named(name, d.url.clone(), "acme.example");
    NewListing::plain(Slug::slugify(name).unwrap(), profile, Lifecycle::saved(), Utc::now())
}

on_every_store!(a_draft_round_trips_whole, |store| {
    let owner = user(store, "ann@acme.example").await;
    let d = rich_draft(owner);
    store.create_draft(&d).await.unwrap();
    let back = store.get_draft(d.id).await.unwrap().unwrap();
    assert_eq!(back.profile, d.profile);
    assert_eq!(back.extras, d.extras);
    assert_eq!(
        (back.status().clone(), back.url.clone(), back.owner, back.version),
        (d.status().clone(), d.url.clone(), owner, 0)
    );
    assert_eq!(back.extras.milestones[0].date, NaiveDate::from_ymd_opt(2024, 1, 2).unwrap());
});

on_every_store!(saves_are_compare_and_set, |store| {
    let owner = user(store, "ann@acme.example").await;
    let d = rich_draft(owner);
    store.create_draft(&d).await.unwrap();
    let mut a = store.get_draft(d.id).await.unwrap().unwrap();
    let mut b = a.clone();
    a.profile.set_by_user(DraftField::City, FieldValue::Text("Cork".into())).unwrap();
    b.profile.set_by_user(DraftField::City, FieldValue::Text("Dublin".into())).unwrap();
    let saved = store.save_draft(&a, Utc::now()).await.unwrap().expect("the first save wins");
    assert_eq!(saved.version, 1);
    assert!(store.save_draft(&b, Utc::now()).await.unwrap().is_none(), "a save from a stale read is refused");
    let now = store.get_draft(d.id).await.unwrap().unwrap();
    assert_eq!(now.profile.field(DraftField::City).value, Some(FieldValue::Text("Cork".into())));
});

on_every_store!(drafts_being_read_stop_at_the_cap_even_submitted_all_at_once, |store| {
    use domain::draft::DraftStatus;
    let ann = user(store, "ann@acme.example").await;
    let bob = user(store, "bob@acme.example").await;
    let done = rich_draft(ann);
    assert_ne!(*done.status(), DraftStatus::Crawling);
    store.create_draft(&done).await.unwrap();
    let reading = |owner, n: usize| {
        Draft::new(
            DraftId::new_random(),
            owner,
            SiteUrl::parse("url", &format!("site{n}.example")).unwrap(),
            Utc::now(),
        )
    };
    let made = (0..8).map(|n| {
        let (store, d) = (store.clone(), reading(ann, n));
        tokio::spawn(async move { store.create_draft_within(&d, 3).await })
    });
    let made: Vec<bool> = futures::future::join_all(made).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    assert_eq!(made.iter().filter(|m| **m).count(), 3, "a draft not being read does not count: {made:?}");
    assert!(store.create_draft_within(&reading(bob, 9), 3).await.unwrap(), "another account has its own");
    // One of them failing frees a place.
    let mut gone = store.list_drafts(ann, PageRequest::parse(Some(1), Some(10)).unwrap()).await.unwrap().items;
    gone.retain(|d| *d.status() == DraftStatus::Crawling);
    let mut failed = gone.remove(0);
    failed.fail("the site did not answer").unwrap();
    store.save_draft(&failed, Utc::now()).await.unwrap().unwrap();
    assert!(store.create_draft_within(&reading(ann, 10), 3).await.unwrap());
    assert!(!store.create_draft_within(&reading(ann, 11), 3).await.unwrap());
});

on_every_store!(drafts_are_listed_per_owner_newest_first, |store| {
    let ann = user(store, "ann@acme.example").await;
    let bob = user(store, "bob@acme.example").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let mut d = rich_draft(ann);
        d.created_at += chrono::Duration::minutes(i);
        store.create_draft(&d).await.unwrap();
        ids.push(d.id);
    }
    store.create_draft(&rich_draft(bob)).await.unwrap();
    let page = store.list_drafts(ann, PageRequest::parse(Some(1), Some(2)).unwrap()).await.unwrap();
    assert_eq!(page.total, 5);
    assert_eq!(page.items.iter().map(|d| d.id).collect::<Vec<_>>(), [ids[4], ids[3]]);
});

on_every_store!(concurrent_submits_make_one_listing_with_its_members, |store| {
    let ann = user(store, "ann@acme.example").await;
    let cy = user(store, "cy@acme.example").await;
    let d = rich_draft(ann);
    store.create_draft(&d).await.unwrap();
    let inv = store.create_invite(d.id, "cy@acme.example", "hash-cy", Utc::now()).await.unwrap();
    store.accept_invite(inv.id, cy, Utc::now()).await.unwrap();
    let tasks: Vec<_> = (0..6)
        .map(|_| {
            let (store, d) = (store.clone(), d.clone());
            tokio::spawn(async move { store.save_draft_listing(&d, &listing_of(&d, "Acme Rockets"), Utc::now()).await })
        })
        .collect();
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(id) => {
                ids.insert(id);
            }
            Err(RepoError::Conflict(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(ids.len(), 1, "one listing for one draft: {ids:?}");
    let id = *ids.iter().next().unwrap();
    assert_eq!(store.get_draft(d.id).await.unwrap().unwrap().listing_id, Some(id));
    // A later save updates it in place.
    let again = store.save_draft_listing(&d, &listing_of(&d, "Acme Rockets Two"), Utc::now()).await.unwrap();
    assert_eq!(again, id);
    let l = store.get_listing(id).await.unwrap().unwrap();
    assert_eq!((l.profile.name.as_str(), l.slug.as_str()), ("Acme Rockets Two", "acme-rockets"), "the slug stays");
});

on_every_store!(invites_stop_at_ten_and_a_repeat_is_a_fresh_link, |store| {
    let ann = user(store, "ann@acme.example").await;
    let d = rich_draft(ann);
    store.create_draft(&d).await.unwrap();
    let first = store.create_invite(d.id, "p0@acme.example", "h0", Utc::now()).await.unwrap();
    let again = store.create_invite(d.id, "p0@acme.example", "h0-new", Utc::now()).await.unwrap();
    assert_eq!(first.id, again.id);
    assert!(store.invite_by_token("h0").await.unwrap().is_none(), "the old link is dead");
    assert_eq!(store.invite_by_token("h0-new").await.unwrap().unwrap().id, first.id);
    for i in 1..10 {
        store.create_invite(d.id, &format!("p{i}@acme.example"), &format!("h{i}"), Utc::now()).await.unwrap();
    }
    for token in std::iter::once("h0-new".to_owned()).chain((1..10).map(|i| format!("h{i}"))) {
        assert!(store.invite_by_token(&token).await.unwrap().is_some(), "{token}: ten invites stored");
    }
    assert!(matches!(
        store.create_invite(d.id, "p10@acme.example", "h10", Utc::now()).await,
        Err(RepoError::Conflict(_))
    ));
});

on_every_store!(the_outbox_filters_and_records_delivery, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    assert_eq!(store.unsent_emails().await.unwrap(), (0, None));
    let a = store.queue_email("Ann@Acme.example", "Hi", "Body one", now).await.unwrap();
    store.queue_email("bob@acme.example", "Hi", "Body two", now + chrono::Duration::seconds(5)).await.unwrap();
    assert_eq!(store.unsent_emails().await.unwrap(), (2, Some(now)));
    let to_ann = store.outbox(Some("ann@acme.example"), 10).await.unwrap();
    assert_eq!(to_ann.len(), 1);
    assert_eq!(store.outbox(None, 10).await.unwrap().len(), 2);
    store.mark_email_failed(a, "connection refused").await.unwrap();
    let e = store.get_email(a).await.unwrap().unwrap();
    assert_eq!((e.attempts, e.last_error.as_deref(), e.sent_at), (1, Some("connection refused"), None));
    store.mark_email_sent(a, now).await.unwrap();
    let e = store.get_email(a).await.unwrap().unwrap();
    assert!(e.sent_at.is_some() && e.last_error.is_none());
    let later = now + chrono::Duration::seconds(5);
    assert_eq!(store.unsent_emails().await.unwrap(), (1, Some(later)), "the sent one is no longer waiting");
});
