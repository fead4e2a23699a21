//! Moderation on every store: a hidden listing leaves every public read and its kept counts and comes
//! back exactly; a suspension hides what the account controls, takes its votes out of every figure
//! and puts them back; reports once per person; the blocklist; each action with its audit line.

use crate::accounts::user;
use crate::{listing, now, on_every_store};
use chrono::Duration;
use domain::draft::{Draft, SiteUrl};
use domain::engagement::Vote;
use domain::ids::{DraftId, ListingId, UserId};
use domain::listing::{ListingSearch, ListingStatus, NewListing, RankMetric};
use domain::moderation::{
    AuditAction, BlockedDomain, Hold, HoldCause, NewAuditEntry, NewReport, ReportNote, ReportReason,
};
use domain::paging::PageRequest;
use domain::ports::{Blocked, Store};
use domain::week::LaunchWeek;
use std::sync::Arc;

fn line(action: AuditAction, target: &str, reason: &str) -> NewAuditEntry {
    NewAuditEntry { at: now(), actor: "cli".into(), action, target: target.into(), reason: reason.into() }
}

fn hold(cause: HoldCause, reason: &str) -> Hold {
    Hold { reason: reason.into(), cause, at: now(), by: "cli".into() }
}

/// A live listing `owner` controls (made from their draft, as a maker's listing is).
async fn owned_live(
    store: &Arc<dyn Store>,
    owner: UserId,
    name: &str,
    primary: Option<domain::ids::CategoryId>,
) -> ListingId {
    let d = Draft::new(
        DraftId::new_random(),
        owner,
        SiteUrl::parse("url", &format!("{}.example", domain::slug::Slug::slugify(name).unwrap())).unwrap(),
        now(),
    );
    store.create_draft(&d).await.unwrap();
    let new = NewListing {
        categories: primary.map(domain::category::ListingCategories::new),
        ..listing(name, ListingStatus::Draft, None)
    };
    let id = store.save_draft_listing(&d, &new, now()).await.unwrap();
    let saved = store.get_listing(id).await.unwrap().unwrap();
    let mut live = saved.lifecycle;
    live.paid_launch(None, now()).unwrap();
    assert!(store.move_lifecycle(id, &saved.lifecycle, &live, now()).await.unwrap());
    id
}

async fn vote(store: &Arc<dyn Store>, id: ListingId, voter: UserId, hours_ago: i64) {
    let v = Vote { listing_id: id, voter, cast_at: now() - Duration::hours(hours_ago), weight: 1.0, address_key: None };
    assert!(store.cast_vote(&v).await.unwrap().counted());
}

/// What the public reads show of the directory: search, trending, this week's board, live slugs,
/// category counts.
async fn public_view(store: &Arc<dyn Store>) -> (Vec<String>, Vec<(String, i64)>, Vec<(String, i64)>, usize, Vec<u64>) {
    let page = PageRequest::default();
    let search = store.search_listings(&ListingSearch::default(), page).await.unwrap();
    let by_votes = store.ranked(RankMetric::Votes, page).await.unwrap();
    let trending = ListingSearch { sort: domain::listing::SearchSort::Trending, ..Default::default() };
    let trending = store.search_listings(&trending, page).await.unwrap();
    let weekly = store.weekly_votes(LaunchWeek::of(now()), page).await.unwrap();
    let max = store.max_listing_id().await.unwrap();
    let cats = store.list_categories().await.unwrap();
    (
        search.items.iter().map(|s| s.name.clone()).collect(),
        by_votes
            .items
            .iter()
            .map(|(s, n)| (s.name.clone(), *n))
            .chain(trending.items.iter().map(|s| (s.name.clone(), -1)))
            .collect(),
        weekly.items.iter().map(|(s, n)| (s.name.clone(), *n)).collect(),
        store.live_slugs_in(0, max).await.unwrap().len(),
        cats.iter().map(|c| c.live_listings).collect(),
    )
}

on_every_store!(a_hidden_listing_leaves_every_public_read_and_comes_back_exactly, |store| {
    let cats = crate::seed_categories(store).await;
    let dev = crate::cat_id(&cats, "dev-tools");
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap().id;
    let fan = store.create_user(user("fan@people.example"), now()).await.unwrap().id;
    let spam = owned_live(store, ann, "Spammy", Some(dev)).await;
    let fine = owned_live(store, ann, "Fine", Some(dev)).await;
    vote(store, spam, fan, 1).await;
    vote(store, fine, fan, 2).await;
    let before = public_view(store).await;
    assert!(before.0.contains(&"Spammy".to_owned()) && before.3 == 2, "{before:?}");
    let reporter = store.create_user(user("rita@people.example"), now()).await.unwrap().id;
    let report = NewReport {
        listing: spam,
        reporter,
        reason: ReportReason::Scam,
        note: ReportNote::parse("takes money").unwrap(),
        at: now(),
    };
    assert!(store.file_report(&report).await.unwrap());

    let l = store.get_listing(spam).await.unwrap().unwrap();
    let mut hidden = l.lifecycle;
    hidden.hide().unwrap();
    let why = hold(HoldCause::Moderator, "a scam");
    assert!(
        store
            .hide_listing(spam, &l.lifecycle, &hidden, &why, &line(AuditAction::HideListing, "spammy", "a scam"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .hide_listing(spam, &l.lifecycle, &hidden, &why, &line(AuditAction::HideListing, "spammy", "x"))
            .await
            .unwrap(),
        "a stale hide changes nothing"
    );
    let got = store.get_listing(spam).await.unwrap().unwrap();
    assert_eq!((got.lifecycle.status(), got.lifecycle.held()), (ListingStatus::Hidden, Some(ListingStatus::Live)));
    assert_eq!(store.listing_hold(spam).await.unwrap(), Some(why));
    assert_eq!(store.live_listing_id(&got.slug).await.unwrap(), None);
    let during = public_view(store).await;
    assert_eq!(during.0, ["Fine"], "search");
    assert_eq!(
        during.1.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["Fine", "Fine"],
        "by votes, then trending"
    );
    assert_eq!(during.2.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["Fine"], "weekly board");
    assert_eq!(during.3, 1, "sitemap ranges");
    assert_eq!(during.4.iter().sum::<u64>(), before.4.iter().sum::<u64>() - 1, "category counts");
    assert!(store.alternatives(fine, 10).await.unwrap().is_empty(), "not an alternative");
    let open = store.reports(true, 10).await.unwrap();
    assert!(open.is_empty(), "hiding closes the listing's reports: {open:?}");
    assert_eq!(store.owned_listing(ann, spam).await.unwrap().unwrap().lifecycle.status(), ListingStatus::Hidden);

    let mut back = hidden;
    back.restore().unwrap();
    assert!(
        store.restore_listing(spam, &hidden, &back, &line(AuditAction::RestoreListing, "spammy", "")).await.unwrap()
    );
    assert_eq!(store.get_listing(spam).await.unwrap().unwrap().lifecycle, l.lifecycle, "exactly as it was");
    assert_eq!(store.listing_hold(spam).await.unwrap(), None);
    assert_eq!(public_view(store).await, before, "every public read as before");
    let log = store.audit_log(10).await.unwrap();
    let actions: Vec<_> = log.iter().map(|a| (a.entry.action, a.entry.target.as_str())).collect();
    assert_eq!(
        actions,
        [(AuditAction::RestoreListing, "spammy"), (AuditAction::HideListing, "spammy")],
        "newest first, one line per action"
    );
});

on_every_store!(a_suspension_hides_what_the_account_controls_and_holds_its_votes_until_restored, |store| {
    let cats = crate::seed_categories(store).await;
    let dev = crate::cat_id(&cats, "dev-tools");
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap().id;
    let bob = store.create_user(user("bob@acme.example"), now()).await.unwrap().id;
    let sock = store.create_user(user("sock@puppets.example"), now()).await.unwrap().id;
    let a = owned_live(store, ann, "Annex", Some(dev)).await;
    let b = owned_live(store, bob, "Bobcat", Some(dev)).await;
    let socks = owned_live(store, sock, "Sockshop", Some(dev)).await;
    // The sock puppet pushes Bobcat over Annex this week and last.
    vote(store, a, ann, 1).await;
    vote(store, b, sock, 1).await;
    vote(store, b, ann, 3).await;
    vote(store, a, sock, 24 * 8).await;
    // A listing the site team hid on its own stays hidden whatever happens to the account.
    let other = owned_live(store, sock, "Sock Two", Some(dev)).await;
    let o = store.get_listing(other).await.unwrap().unwrap();
    let mut hidden = o.lifecycle;
    hidden.hide().unwrap();
    store
        .hide_listing(
            other,
            &o.lifecycle,
            &hidden,
            &hold(HoldCause::Moderator, "copy"),
            &line(AuditAction::HideListing, "sock-two", "copy"),
        )
        .await
        .unwrap();
    store.create_session(sock, "session-hash", "csrf", now(), now() + Duration::days(1)).await.unwrap();
    let before = public_view(store).await;
    let votes_of = |id: ListingId| {
        let store = store.clone();
        async move { store.get_listing(id).await.unwrap().unwrap().votes }
    };
    assert_eq!((votes_of(a).await, votes_of(b).await), (2, 2));
    let trending_a = store.get_listing(a).await.unwrap().unwrap().trending_score;
    let trending_b = store.get_listing(b).await.unwrap().unwrap().trending_score;

    let why = hold(HoldCause::Suspension, "the owner's account is suspended: sock puppet");
    let effect = store
        .suspend_user(sock, &why, &line(AuditAction::SuspendUser, "sock@puppets.example", "sock puppet"))
        .await
        .unwrap();
    assert_eq!(
        effect.map(|e| (e.listings, e.votes)),
        Some((1, 2)),
        "Sockshop hidden (Sock Two already was); two votes held"
    );
    assert!(store.suspend_user(sock, &why, &line(AuditAction::SuspendUser, "x", "x")).await.unwrap().is_none(), "once");
    let u = store.get_user(sock).await.unwrap().unwrap();
    assert!(u.suspended(), "{u:?}");
    assert_eq!(store.suspension(sock).await.unwrap().map(|(_, r)| r), Some("sock puppet".to_owned()));
    assert_eq!(store.session("session-hash", now()).await.unwrap(), None, "its sessions end");
    assert_eq!((votes_of(a).await, votes_of(b).await), (1, 1), "its votes stop counting");
    let b_now = store.get_listing(b).await.unwrap().unwrap().trending_score;
    assert!(b_now < trending_b, "trending recounted without the held vote: {b_now} < {trending_b}");
    assert_eq!(store.engagement_of(b, sock).await.unwrap(), (false, false));
    let during = public_view(store).await;
    assert_eq!(
        during.2,
        [("Annex".to_owned(), 1), ("Bobcat".to_owned(), 1)],
        "this week's tally recounted: {during:?}"
    );
    assert!(!during.0.contains(&"Sockshop".to_owned()), "its listing is hidden");
    assert_eq!(store.get_listing(socks).await.unwrap().unwrap().lifecycle.status(), ListingStatus::Hidden);
    assert_eq!(store.listing_hold(socks).await.unwrap().map(|h| h.cause), Some(HoldCause::Suspension));

    let back = store.restore_user(sock, &line(AuditAction::RestoreUser, "sock@puppets.example", "")).await.unwrap();
    assert_eq!(back.map(|e| (e.listings, e.votes)), Some((1, 2)));
    assert!(store.restore_user(sock, &line(AuditAction::RestoreUser, "x", "")).await.unwrap().is_none(), "once");
    assert!(!store.get_user(sock).await.unwrap().unwrap().suspended());
    assert_eq!((votes_of(a).await, votes_of(b).await), (2, 2), "its votes count again");
    assert_eq!(public_view(store).await, before, "every public read as before");
    for (id, score) in [(a, trending_a), (b, trending_b)] {
        let now_score = store.get_listing(id).await.unwrap().unwrap().trending_score;
        assert!((now_score - score).abs() < 1e-9, "trending as before: {now_score} vs {score}");
    }
    assert_eq!(
        store.get_listing(other).await.unwrap().unwrap().lifecycle.status(),
        ListingStatus::Hidden,
        "the site team's own hiding stays"
    );
    assert_eq!(store.engagement_of(b, sock).await.unwrap(), (true, false));
});

on_every_store!(two_suspensions_at_once_whose_listings_and_votes_cross_both_finish, |store| {
    // Ann votes for every listing Bob controls and Bob for every one of Ann's. Suspending (or
    // restoring) both at once locks the same listings, each from its own side: in two orders, one of
    // them would wait for the other while holding what the other waits for, and PostgreSQL would
    // abort it as a deadlock. The moderator would see a 500 and have to try again.
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap().id;
    let bob = store.create_user(user("bob@acme.example"), now()).await.unwrap().id;
    let (mut anns, mut bobs) = (Vec::new(), Vec::new());
    for k in 0..12 {
        anns.push(owned_live(store, ann, &format!("Ann {k}"), None).await);
        bobs.push(owned_live(store, bob, &format!("Bob {k}"), None).await);
    }
    for (a, b) in anns.iter().zip(&bobs) {
        vote(store, *b, ann, 1).await;
        vote(store, *a, bob, 2).await;
    }
    let before = public_view(store).await;
    let why = hold(HoldCause::Suspension, "the owner's account is suspended: ring");
    for round in 0..3 {
        let both = [ann, bob].map(|u| {
            let (store, why) = (store.clone(), why.clone());
            tokio::spawn(async move { store.suspend_user(u, &why, &line(AuditAction::SuspendUser, "x", "ring")).await })
        });
        for r in futures::future::join_all(both).await {
            let effect = r.unwrap().unwrap_or_else(|e| panic!("round {round}: a suspension failed: {e}"));
            assert_eq!(effect.map(|e| (e.listings, e.votes)), Some((12, 12)), "round {round}");
        }
        for id in anns.iter().chain(&bobs) {
            let l = store.get_listing(*id).await.unwrap().unwrap();
            assert_eq!((l.lifecycle.status(), l.votes), (ListingStatus::Hidden, 0), "round {round}");
        }
        let both = [ann, bob].map(|u| {
            let store = store.clone();
            tokio::spawn(async move { store.restore_user(u, &line(AuditAction::RestoreUser, "x", "")).await })
        });
        for r in futures::future::join_all(both).await {
            let effect = r.unwrap().unwrap_or_else(|e| panic!("round {round}: a restore failed: {e}"));
            assert_eq!(effect.map(|e| (e.listings, e.votes)), Some((12, 12)), "round {round}");
        }
        assert_eq!(public_view(store).await, before, "round {round}: every public read as before");
    }
});

on_every_store!(a_suspended_account_casts_no_vote_even_one_racing_its_suspension, |store| {
    // The site checks the account when the request comes in; a vote already past that check when the
    // suspension commits must not land in `votes` after the suspension moved the account's votes
    // out: it would count while the account is suspended, and the suspension cannot be repeated.
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap().id;
    let sock = store.create_user(user("sock@puppets.example"), now()).await.unwrap().id;
    let mut ids = Vec::new();
    for k in 0..24 {
        ids.push(owned_live(store, ann, &format!("Target {k}"), None).await);
    }
    for id in &ids[..4] {
        vote(store, *id, sock, 1).await;
    }
    let why = hold(HoldCause::Suspension, "the owner's account is suspended: ring");
    let casts = ids[4..].iter().map(|id| {
        let store = store.clone();
        let v = Vote { listing_id: *id, voter: sock, cast_at: now(), weight: 1.0, address_key: None };
        tokio::spawn(async move { store.cast_vote(&v).await.map(domain::engagement::Cast::counted) })
    });
    let suspension = {
        let store = store.clone();
        tokio::spawn(async move { store.suspend_user(sock, &why, &line(AuditAction::SuspendUser, "x", "ring")).await })
    };
    let (cast, suspended) = futures::future::join(futures::future::join_all(casts), suspension).await;
    let cast = cast.into_iter().filter(|r| *r.as_ref().unwrap().as_ref().unwrap()).count();
    let held = suspended.unwrap().unwrap().expect("suspended once").votes;
    assert!(held >= 4, "the votes before it are held: {held}");
    for id in &ids {
        let l = store.get_listing(*id).await.unwrap().unwrap();
        assert_eq!((l.votes, store.engagement_of(*id, sock).await.unwrap().0), (0, false), "{}", l.profile.name);
    }
    // What was cast was cast before the suspension, and is held with the rest.
    assert_eq!(held, 4 + cast as u64);
    // After it, every vote is refused outright.
    let fresh = owned_live(store, ann, "Fresh", None).await;
    let late = Vote { listing_id: fresh, voter: sock, cast_at: now(), weight: 1.0, address_key: None };
    assert!(!store.cast_vote(&late).await.unwrap().counted(), "a suspended account's vote is not cast");
    assert_eq!(store.get_listing(fresh).await.unwrap().unwrap().votes, 0);
    let back = store.restore_user(sock, &line(AuditAction::RestoreUser, "x", "")).await.unwrap();
    assert_eq!(back.map(|e| e.votes), Some(held), "the held votes come back");
    assert!(store.cast_vote(&late).await.unwrap().counted(), "restored, it votes again");
    assert_eq!(store.get_listing(fresh).await.unwrap().unwrap().votes, 1);
});

on_every_store!(a_vote_taken_back_while_its_account_is_suspended_is_held_or_gone_never_both, |store| {
    // The suspension reads the account's votes and then moves each one; a vote taken back in
    // between is gone by the time it is moved. Counted out a second time it would leave the total
    // one short, and held it would come back on restore though the person had taken it back.
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap().id;
    let sock = store.create_user(user("sock@puppets.example"), now()).await.unwrap().id;
    let fan = store.create_user(user("fan@people.example"), now()).await.unwrap().id;
    let mut ids = Vec::new();
    for k in 0..20 {
        let id = owned_live(store, ann, &format!("Target {k}"), None).await;
        vote(store, id, sock, 1).await;
        vote(store, id, fan, 2).await;
        ids.push(id);
    }
    let why = hold(HoldCause::Suspension, "the owner's account is suspended: ring");
    let takes = ids.iter().map(|id| {
        let (store, id) = (store.clone(), *id);
        tokio::spawn(async move { store.uncast_vote(id, sock).await })
    });
    let suspension = {
        let store = store.clone();
        tokio::spawn(async move { store.suspend_user(sock, &why, &line(AuditAction::SuspendUser, "x", "ring")).await })
    };
    let (taken, suspended) = futures::future::join(futures::future::join_all(takes), suspension).await;
    let taken: Vec<bool> = taken.into_iter().map(|r| r.unwrap().unwrap()).collect();
    let held = suspended.unwrap().unwrap().expect("suspended once").votes;
    assert_eq!(held, taken.iter().filter(|t| !**t).count() as u64, "each vote taken back or held: {taken:?}");
    for id in &ids {
        assert_eq!(store.get_listing(*id).await.unwrap().unwrap().votes, 1, "the fan's vote alone counts");
    }
    store.restore_user(sock, &line(AuditAction::RestoreUser, "x", "")).await.unwrap();
    for (id, gone) in ids.iter().zip(&taken) {
        let l = store.get_listing(*id).await.unwrap().unwrap();
        let back = store.engagement_of(*id, sock).await.unwrap().0;
        assert_eq!((l.votes, back), if *gone { (1, false) } else { (2, true) }, "{}", l.profile.name);
    }
});

on_every_store!(reports_are_once_per_person_and_close_with_an_audit_line, |store| {
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap().id;
    let rita = store.create_user(user("rita@people.example"), now()).await.unwrap().id;
    let sam = store.create_user(user("sam@people.example"), now()).await.unwrap().id;
    let l = owned_live(store, ann, "Reported", None).await;
    let report = |reporter, reason, note: &str, minutes| NewReport {
        listing: l,
        reporter,
        reason,
        note: ReportNote::parse(note).unwrap(),
        at: now() + Duration::minutes(minutes),
    };
    assert!(store.file_report(&report(rita, ReportReason::Spam, "spam links", 0)).await.unwrap());
    assert!(!store.file_report(&report(rita, ReportReason::Scam, "again", 1)).await.unwrap(), "once per person");
    assert!(store.file_report(&report(sam, ReportReason::BrokenLink, "", 2)).await.unwrap());
    let open = store.reports(true, 10).await.unwrap();
    let got: Vec<_> = open
        .iter()
        .map(|r| (r.reporter.as_deref(), r.reason, r.listing_slug.as_str(), r.listing_name.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("sam@people.example"), ReportReason::BrokenLink, "reported", "Reported"),
            (Some("rita@people.example"), ReportReason::Spam, "reported", "Reported")
        ],
        "newest first"
    );
    assert_eq!(open[1].note, "spam links");
    assert_eq!(store.reports(true, 1).await.unwrap().len(), 1, "the limit holds");
    assert_eq!(
        store.close_reports(l, now(), &line(AuditAction::CloseReports, "reported", "not spam")).await.unwrap(),
        2
    );
    assert_eq!(store.close_reports(l, now(), &line(AuditAction::CloseReports, "reported", "again")).await.unwrap(), 0);
    assert!(store.reports(true, 10).await.unwrap().is_empty());
    assert!(store.reports(false, 10).await.unwrap().iter().all(|r| r.closed_at == Some(now())));
    let log = store.audit_log(10).await.unwrap();
    assert_eq!(log.len(), 1, "closing nothing writes nothing: {log:?}");
    assert_eq!(log[0].entry.reason, "not spam");
});

on_every_store!(the_blocklist_covers_subdomains_and_every_change_is_audited, |store| {
    let spam = BlockedDomain::parse("domain", "spam.example").unwrap();
    let entry =
        Blocked { domain: spam.clone(), reason: "a spam farm".into(), at: now(), by: "admin@site.example".into() };
    assert!(store.block_domain(&entry, &line(AuditAction::BlockDomain, "spam.example", "a spam farm")).await.unwrap());
    assert!(!store.block_domain(&entry, &line(AuditAction::BlockDomain, "spam.example", "x")).await.unwrap(), "once");
    assert_eq!(store.blocked_domains().await.unwrap(), std::slice::from_ref(&entry));
    let lookup = |host: &str| {
        let (store, host) = (store.clone(), host.to_owned());
        async move { store.blocked_among(&domain::moderation::domains_of(&host)).await.unwrap().map(|b| b.domain) }
    };
    assert_eq!(lookup("shop.spam.example").await, Some(spam.clone()));
    assert_eq!(lookup("www.spam.example").await, Some(spam.clone()));
    assert_eq!(lookup("notspam.example").await, None);
    assert!(store.unblock_domain(&spam, &line(AuditAction::UnblockDomain, "spam.example", "")).await.unwrap());
    assert!(!store.unblock_domain(&spam, &line(AuditAction::UnblockDomain, "spam.example", "")).await.unwrap());
    assert_eq!(lookup("spam.example").await, None);
    let actions: Vec<_> = store.audit_log(10).await.unwrap().into_iter().map(|a| a.entry.action).collect();
    assert_eq!(actions, [AuditAction::UnblockDomain, AuditAction::BlockDomain], "only what happened");
});

on_every_store!(the_console_lists_new_listings_and_recent_edits_newest_first, |store| {
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap().id;
    let first = owned_live(store, ann, "First", None).await;
    let second = owned_live(store, ann, "Second", None).await;
    let recent: Vec<ListingId> = store.recent_listings(10).await.unwrap().iter().map(|l| l.id).collect();
    assert_eq!(recent, [second, first]);
    let l = store.get_listing(first).await.unwrap().unwrap();
    let mut p = l.profile.clone();
    p.tagline = "Edited".into();
    store.save_profile_edit(first, ann, &p, r#"{"tagline":"a"}"#, r#"{"tagline":"Edited"}"#, now()).await.unwrap();
    let edits = store.recent_edits(5).await.unwrap();
    assert_eq!(edits.len(), 1);
    assert_eq!((edits[0].slug.as_str(), edits[0].editor.as_deref()), ("first", Some("ann@acme.example")));
    assert_eq!(edits[0].version.after, r#"{"tagline":"Edited"}"#);
});
