//! The maker's journey on the site, signed in and without an API client: submit a website and watch
//! the draft fill in (the page refreshes itself until it is ready, or says why it failed), save it as a
//! listing, choose the free launch and get the badge code, or buy a launch through checkout, edit the
//! listing and post an update. Every form is CSRF-checked and a refusal names the field.

use crate::helpers::spawn_app_configured;
use crate::pages::{Browser, hidden, sign_up};
use test_support::FixtureSite;

/// Follows the draft page until it stops refreshing itself; returns the last page and whether any
/// page on the way asked to be refreshed.
async fn until_settled(b: &mut Browser<'_>, draft: &str) -> (String, bool) {
    let mut refreshed = false;
    for _ in 0..150 {
        let (status, page, _) = b.get(draft).await;
        assert_eq!(status, 200, "{page}");
        if !page.contains(r#"http-equiv="refresh""#) {
            return (page, refreshed);
        }
        assert!(page.contains(r#"id="draft-progress""#), "a refreshing page says what is happening");
        refreshed = true;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the draft at {draft} never settled");
}

/// The text between `start` and the next `end` after it.
fn between(html: &str, start: &str, end: &str) -> String {
    let from = html.find(start).unwrap_or_else(|| panic!("no {start} in {html}")) + start.len();
    html[from..from + html[from..].find(end).unwrap()].to_owned()
}

#[tokio::test]
async fn a_maker_submits_a_site_watches_the_draft_and_launches_it_for_free() {
    let site_dir = tempfile::tempdir().unwrap();
    test_support::copy_site("acme-rockets", site_dir.path());
    let site = FixtureSite::serve_dir(site_dir.path().to_owned(), "http://127.0.0.1:9").await;
    let blocked = FixtureSite::serve("blocked", "http://127.0.0.1:9").await;
    let allowed = vec![site.host_port(), blocked.host_port()];
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.outbound.crawler_allowed_hosts = allowed).await;
    app.wait_ready().await;
    let mut b = Browser::new(&app);
    sign_up(&mut b, "maker@acme.example").await;

    // Submit the website from the drafts page.
    let (status, drafts, _) = b.get("/me/drafts").await;
    assert_eq!(status, 200);
    assert!(drafts.contains(r#"id="submit-site""#), "a form to submit a website");
    let csrf = hidden(&drafts, "csrf");
    let (status, _, to) = b.post("/me/drafts", &[("csrf", &csrf), ("url", &site.url())]).await;
    assert_eq!(status, 303);
    let draft = to.expect("to the new draft");
    assert!(draft.starts_with("/me/drafts/"), "{draft}");
    let (ready, _) = until_settled(&mut b, &draft).await;
    assert!(ready.contains(r#"id="submit-draft""#), "ready to save: {ready}");
    assert!(ready.contains("Acme Rockets"), "the drafted name");

    // A refused address names the field; a stale form is refused.
    let (status, page, _) = b.post("/me/drafts", &[("csrf", &csrf), ("url", "not a web address at all")]).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("url:"), "the field is named: {page}");
    let (status, _, _) = b.post("/me/drafts", &[("csrf", "stale"), ("url", &site.url())]).await;
    assert_eq!(status, 403);

    // A site that forbids us: the draft page says why, instead of refreshing for ever.
    let (_, _, to) = b.post("/me/drafts", &[("csrf", &csrf), ("url", &blocked.url())]).await;
    let (failed, _) = until_settled(&mut b, &to.unwrap()).await;
    assert!(failed.contains("We could not draft this listing") && failed.contains("robots.txt"), "{failed}");

    // Save the ready draft as the listing, then open it.
    let (status, _, to) = b.post(&format!("{draft}/submit"), &[("csrf", &csrf)]).await;
    assert_eq!((status, to.as_deref()), (303, Some("/me/listings")));
    let (_, listings, _) = b.get("/me/listings").await;
    let at = listings.find("/me/listings/").expect("a link to the listing's page");
    let path: String = listings[at..].chars().take_while(|c| *c != '"').collect();
    let (status, mine, _) = b.get(&path).await;
    assert_eq!(status, 200);
    assert!(mine.contains(r#"id="listing-status">draft<"#), "saved, not published: {mine}");
    assert!(mine.contains(r#"id="choose-free""#) && mine.contains(r#"id="buy-launch""#), "both ways to launch");

    // Edit it: a refusal names the field; a good edit shows.
    let long = "t".repeat(201);
    let form = [("csrf", csrf.as_str()), ("tagline", &long), ("short_description", ""), ("description", "")];
    let (status, page, _) = b.post(&path, &form).await;
    assert_eq!(status, 400);
    assert!(page.contains("fields.tagline"), "{page}");
    let form =
        [("csrf", csrf.as_str()), ("tagline", "Rockets for cats"), ("short_description", ""), ("description", "")];
    let (status, _, _) = b.post(&path, &form).await;
    assert_eq!(status, 303);
    let (_, mine, _) = b.get(&path).await;
    assert!(mine.contains(r#"value="Rockets for cats""#));

    // Before choosing, the exact week and place in its queue; after, the same figures.
    let before = between(&mine, r#"<p id="free-launch">"#, "</p>");
    assert!(before.contains("number <strong>1</strong>"), "the first free launch of its week: {before}");

    // The free launch: a week and the badge to place, with what the last look found.
    let (status, _, to) = b.post(&format!("{path}/free"), &[("csrf", &csrf)]).await;
    assert_eq!((status, to.as_deref()), (303, Some(path.as_str())));
    let (_, queued, _) = b.get(&path).await;
    assert!(queued.contains(r#"id="listing-status">awaiting_badge<"#), "{queued}");
    assert!(queued.contains("launch week of"), "the week it launches in");
    assert!(queued.contains(r#"id="badge-code""#) && queued.contains("&#60;a href="), "the embed code to paste");
    assert!(queued.contains(r#"id="badge-check""#));
    assert_eq!(between(&queued, r#"<p id="free-launch">"#, "</p>"), before, "the week and place promised");
    let (status, again, _) = b.post(&format!("{path}/free"), &[("csrf", &csrf)]).await;
    assert_eq!(status, 409, "chosen once: {again}");

    // "Check my homepage now": what the look found, then, with the badge placed, the launch scheduled.
    let (status, _, to) = b.post(&format!("{path}/badge-check"), &[("csrf", &csrf)]).await;
    assert_eq!((status, to.as_deref()), (303, Some(format!("{path}#badge").as_str())));
    let (_, looked, _) = b.get(&path).await;
    let check = between(&looked, r#"<p class="muted" id="badge-check">"#, "</p>");
    assert!(check.starts_with("Last look") && check.contains("no link to"), "{check}");
    let index = site_dir.path().join("index.html");
    let home = std::fs::read_to_string(&index).unwrap();
    let badge = format!(r#"<a href="{}/listings/acme-rockets">Listed on launchdir</a></body>"#, b.app.base);
    std::fs::write(&index, home.replacen("</body>", &badge, 1)).unwrap();
    let (status, _, _) = b.post(&format!("{path}/badge-check"), &[("csrf", &csrf)]).await;
    assert_eq!(status, 303);
    let (_, scheduled, _) = b.get(&path).await;
    assert!(
        scheduled.contains(r#"id="listing-status">scheduled<"#),
        "the badge found, the launch scheduled: {scheduled}"
    );
    let (status, page, _) = b.post(&format!("{path}/badge-check"), &[("csrf", &csrf)]).await;
    assert_eq!(status, 409, "nothing to look for any more: {page}");

    // An update for followers.
    let (status, _, _) =
        b.post(&format!("{path}/updates"), &[("csrf", &csrf), ("title", "v2"), ("body", "Faster rockets.")]).await;
    assert_eq!(status, 303);
    let (status, page, _) = b.post(&format!("{path}/updates"), &[("csrf", &csrf), ("title", " "), ("body", "x")]).await;
    assert_eq!(status, 400, "{page}");

    the_maker_adds_milestones_writes_the_story_and_answers_the_interview(&mut b, &path, &csrf).await;
}

/// Milestones (added, refused naming the field, deleted), the founders' story (saved, refused at its
/// bound) and the founder interview (answered; an unknown question and an empty form refused).
async fn the_maker_adds_milestones_writes_the_story_and_answers_the_interview(
    b: &mut Browser<'_>,
    path: &str,
    csrf: &str,
) {
    let add = format!("{path}/milestones");
    let milestone = [("csrf", csrf), ("date", "2026-01-05"), ("title", "First <rocket>"), ("description", "")];
    let (status, _, to) = b.post(&add, &milestone).await;
    assert_eq!((status, to.as_deref()), (303, Some(format!("{path}#milestones").as_str())));
    let (_, mine, _) = b.get(path).await;
    assert!(mine.contains("First &#60;rocket&#62;"), "shown, escaped: {mine}");
    let (status, page, _) = b.post(&add, &[("csrf", csrf), ("date", "yesterday"), ("title", "x")]).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("date:"), "the field is named: {page}");
    let (status, _, _) = b.post(&add, &[("csrf", "stale"), ("date", "2026-01-05"), ("title", "x")]).await;
    assert_eq!(status, 403);
    let delete = between(&mine, &format!(r#"action="{}{path}/milestones/"#, b.app.base), r#"""#);
    let (status, _, _) = b.post(&format!("{path}/milestones/{delete}"), &[("csrf", csrf)]).await;
    assert_eq!(status, 303);
    let (_, mine, _) = b.get(path).await;
    assert!(!mine.contains("First &#60;rocket&#62;"), "deleted");

    let story = format!("{path}/story");
    let (status, _, _) =
        b.post(&story, &[("csrf", csrf), ("title", "Why cats"), ("problem", "Cats cannot reach space.")]).await;
    assert_eq!(status, 303);
    let (_, mine, _) = b.get(path).await;
    assert!(mine.contains(r#"value="Why cats""#) && mine.contains(">Cats cannot reach space.</textarea>"), "{mine}");
    let long = "t".repeat(201);
    let (status, page, _) = b.post(&story, &[("csrf", csrf), ("title", &long)]).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("title:"), "{page}");

    let interview = format!("{path}/interview");
    let question = between(&mine, r#"name="answer."#, r#"""#);
    let answer = format!("answer.{question}");
    let (status, _, to) = b.post(&interview, &[("csrf", csrf), (&answer, "Rockets, for cats.")]).await;
    assert_eq!((status, to.as_deref()), (303, Some(format!("{path}#interview").as_str())));
    let (status, page, _) = b.post(&interview, &[("csrf", csrf), ("answer.999999", "x")]).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("question_id"), "the unknown question is named: {page}");
    let (status, page, _) = b.post(&interview, &[("csrf", csrf), (&answer, " ")]).await;
    assert_eq!(status, 400, "nothing written: {page}");
}

#[tokio::test]
async fn a_maker_buys_a_launch_through_checkout_and_another_makers_listing_is_a_404() {
    let site = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let allowed = vec![site.host_port()];
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.outbound.crawler_allowed_hosts = allowed).await;
    app.wait_ready().await;
    let mut b = Browser::new(&app);
    sign_up(&mut b, "buyer@acme.example").await;
    let (_, drafts, _) = b.get("/me/drafts").await;
    let csrf = hidden(&drafts, "csrf");
    let (_, _, to) = b.post("/me/drafts", &[("csrf", &csrf), ("url", &site.url())]).await;
    let draft = to.unwrap();
    until_settled(&mut b, &draft).await;
    b.post(&format!("{draft}/submit"), &[("csrf", &csrf)]).await;
    let (_, listings, _) = b.get("/me/listings").await;
    let at = listings.find("/me/listings/").unwrap();
    let path: String = listings[at..].chars().take_while(|c| *c != '"').collect();

    let (status, _, to) = b.post(&format!("{path}/buy"), &[("csrf", &csrf)]).await;
    assert_eq!(status, 303);
    let checkout = to.expect("to the checkout page");
    assert!(checkout.starts_with("/checkout/"), "{checkout}");
    let (status, page, _) = b.get(&checkout).await;
    assert_eq!(status, 200);
    assert!(page.contains("Launch"), "the order's line: {page}");

    // Someone else: the listing and its actions are not theirs.
    let mut other = Browser::new(&app);
    sign_up(&mut other, "other@else.example").await;
    let (status, _, _) = other.get(&path).await;
    assert_eq!(status, 404);
    let (_, their, _) = other.get("/me/drafts").await;
    let theirs = hidden(&their, "csrf");
    let (status, _, _) = other.post(&format!("{path}/free"), &[("csrf", &theirs)]).await;
    assert_eq!(status, 404);
}
