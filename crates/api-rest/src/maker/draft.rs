//! A maker's draft: each field's value beside its state and the quotes from the site it was drafted
//! from, with a form to change it; then the parts beyond the one-value fields (FAQs, founders, social
//! links, the founder story, milestones, SEO, a competitor to compare with), each one form that
//! replaces that part through update_draft as the API does, so no rule lives here: the operation
//! checks, and its refusal is shown naming the field.
//!
//! Lists are rows numbered from 0 (`question.0`, `answer.0`, …): the items the draft has, then a few
//! blank rows to add to, up to the list's bound. A row left wholly blank is not sent, which is how
//! an item is removed; a refusal's `faqs[i]` is renumbered to the row on the page.

use super::{call, failed, given, refusal};
use crate::server::State;
use crate::site::render;
use crate::web::{html, page, page_with, same, see_other, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use domain::draft::{FieldValue, limits};
use domain::sections::STORY_SECTIONS;
use domain::social::{Faq, PLATFORMS};
use operations::OpError;
use operations::drafts::edit::{
    DraftFieldsInput, FaqInput, FounderInput, MilestoneInput, SeoInput, StoryInput, UpdateDraftInput,
};
use operations::drafts::view::{DraftOut, EvidenceOut, FieldOut, ValueOut};
use operations::drafts::{DraftIdInput, GetDraft, SubmitDraft, UpdateDraft};
use std::collections::BTreeMap;

/// The parts, in page order: (path segment, heading).
const PARTS: [(&str, &str); 7] = [
    ("faqs", "FAQs"),
    ("founders", "Founders"),
    ("socials", "Social links"),
    ("story", "Founder story"),
    ("milestones", "Milestones"),
    ("seo", "Search engines"),
    ("competitor", "Compare with a competitor"),
];

/// One field's row.
struct FieldRow<'a> {
    name: &'a str,
    out: &'a FieldOut,
    /// The value as the form shows it: a list one item per line.
    value: String,
    /// Shown in a text area (a list, or a long text).
    long: bool,
}

/// A group of social links (`company`, `founder`), its legend, and every platform with its link.
type SocialGroup<'a> = (&'static str, &'static str, Vec<(&'static str, &'a str)>);

#[derive(Template)]
#[template(path = "maker/draft.html")]
struct DraftView<'a> {
    base: &'a str,
    csrf: &'a str,
    notice: &'a str,
    d: &'a DraftOut,
    parts: &'static [(&'static str, &'static str)],
    fields: Vec<FieldRow<'a>>,
    /// Question, answer, evidence; then blank rows.
    faqs: Vec<(&'a str, &'a str, &'a [EvidenceOut])>,
    /// Name, role, bio, evidence; then blank rows.
    founders: Vec<(&'a str, &'a str, &'a str, &'a [EvidenceOut])>,
    /// Date, title, description, link; then blank rows.
    milestones: Vec<(&'a str, &'a str, &'a str, &'a str)>,
    socials: Vec<SocialGroup<'a>>,
    story: Vec<(&'static str, String, &'a str)>,
    story_filled: bool,
    seo_max: (usize, usize),
    /// Field, ours, theirs, their evidence.
    competitor_rows: Vec<(&'a str, String, String, &'a [EvidenceOut])>,
    competitor_url: &'a str,
    competitor_max: usize,
}

/// A value in words: a list one item per line.
fn value_text(v: Option<&ValueOut>) -> String {
    match v {
        Some(ValueOut::Text(t)) => t.clone(),
        Some(ValueOut::List(items)) => items.join("\n"),
        None => String::new(),
    }
}

/// How many rows a list of `len` items gets: up to `blank` more, never past `max`.
fn rows(len: usize, blank: usize, max: usize) -> usize {
    (len + blank).min(max).max(len)
}

/// `items` drawn by `row`, then blank rows (`empty`) up to `blank` more, never past `max`.
fn with_blanks<'a, T, R: Clone>(
    items: &'a [T],
    blank: usize,
    max: usize,
    row: impl Fn(&'a T) -> R,
    empty: R,
) -> Vec<R> {
    let mut out: Vec<R> = items.iter().map(row).collect();
    out.resize(rows(items.len(), blank, max), empty);
    out
}

/// `why_started` → "Why started".
pub(crate) fn sentence(name: &str) -> String {
    let text = name.replace('_', " ");
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

async fn draft_page(
    state: &State,
    p: &Principal,
    csrf: &str,
    id: &str,
    notice: &str,
    status: StatusCode,
) -> HttpResponse {
    let d = match call::<GetDraft>(state, p, DraftIdInput { id: id.to_owned() }).await {
        Ok(d) => d,
        Err(e) => return failed(state, p, &e),
    };
    let fields = d
        .fields
        .iter()
        .map(|(name, out)| {
            let value = value_text(out.value.as_ref());
            let long = DraftFieldsInput::is_list(name) || value.len() > 120;
            FieldRow { name, out, value, long }
        })
        .collect();
    let none: &[EvidenceOut] = &[];
    let socials = [
        ("company", "The product's accounts", &d.company_socials),
        ("founder", "The founder's accounts", &d.founder_socials),
    ]
    .into_iter()
    .map(|(group, legend, links)| {
        let links = PLATFORMS.iter().map(|p| (*p, links.get(*p).map_or("", String::as_str))).collect();
        (group, legend, links)
    })
    .collect();
    let story = STORY_SECTIONS
        .iter()
        .map(|name| (*name, sentence(name), d.story.get(*name).map_or("", String::as_str)))
        .collect();
    let competitor_rows = d
        .competitor
        .iter()
        .flat_map(|c| &c.rows)
        .map(|r| (r.field.as_str(), value_text(r.ours.as_ref()), value_text(r.theirs.as_ref()), &r.their_evidence[..]))
        .collect();
    let view = DraftView {
        base: &state.public_url,
        csrf,
        notice,
        d: &d,
        parts: &PARTS,
        fields,
        faqs: with_blanks(
            &d.faqs,
            2,
            Faq::MAX_ITEMS,
            |f| (&f.question[..], &f.answer[..], &f.evidence[..]),
            ("", "", none),
        ),
        founders: with_blanks(
            &d.founders,
            1,
            limits::FOUNDERS,
            |f| (&f.name[..], &f.title[..], &f.bio[..], &f.evidence[..]),
            ("", "", "", none),
        ),
        milestones: with_blanks(
            &d.milestones,
            2,
            limits::MILESTONES,
            |m| (&m.date[..], &m.title[..], &m.description[..], &m.url[..]),
            ("", "", "", ""),
        ),
        socials,
        story,
        story_filled: d.story.values().any(|v| !v.is_empty()),
        seo_max: (limits::SEO_TITLE, limits::SEO_META),
        competitor_rows,
        competitor_url: d.competitor.as_ref().map_or("", |c| c.url.as_str()),
        competitor_max: limits::COMPETITOR_URL,
    };
    let body = match render(&view) {
        Ok(b) => b,
        Err(e) => return failed(state, p, &e),
    };
    if matches!(d.status.as_str(), "crawling" | "drafting") {
        // No JavaScript: the page asks to be loaded again in two seconds while the site is read.
        let head = r#"<meta http-equiv="refresh" content="2"><meta name="robots" content="noindex">"#;
        return html(status, page_with(state, "Draft", Some(p), &body, Some(head)));
    }
    html(status, page(state, "Draft", Some(p), &body))
}

pub async fn draft(state: web::Data<State>, req: HttpRequest, id: web::Path<String>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    draft_page(&state, &p, &csrf, &id, "", StatusCode::OK).await
}

/// The draft page again with why the operation refused (400 naming each field, 409 its state).
/// `rows` maps a list's sent items back to the rows of its form (see [`renumber`]).
async fn refused(
    state: &State,
    p: &Principal,
    csrf: &str,
    id: &str,
    e: OpError,
    rows: Option<(&str, &[usize])>,
) -> HttpResponse {
    let field = |f: &str| rows.map_or(f.to_owned(), |(part, rows)| renumber(f, part, rows));
    let (msg, status) = refusal(&e, field);
    let Some(status) = status else { return failed(state, p, &e) };
    draft_page(state, p, csrf, id, &msg, status).await
}

/// The draft page again, saying the form's CSRF token did not match the session (403).
async fn expired(state: &State, p: &Principal, csrf: &str, id: &str) -> HttpResponse {
    draft_page(state, p, csrf, id, "This form expired. Please try again.", StatusCode::FORBIDDEN).await
}

/// An update of the draft `id` changing nothing yet.
fn nothing(id: &str) -> UpdateDraftInput {
    UpdateDraftInput {
        id: id.to_owned(),
        fields: None,
        lock_fields: None,
        regenerate: None,
        restore: None,
        faqs: None,
        company_socials: None,
        founder_socials: None,
        founders: None,
        story: None,
        milestones: None,
        competitor_url: None,
        seo: None,
    }
}

/// Saves one field of the draft through update_draft (an empty value removes it); a refused value is
/// shown with the operation's own message, naming the field.
pub async fn edit_field(
    state: web::Data<State>,
    req: HttpRequest,
    id: web::Path<String>,
    form: web::Form<Vec<(String, String)>>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    if !same(&state, given(&form, "csrf").as_deref().unwrap_or_default(), &csrf) {
        return expired(&state, &p, &csrf, &id).await;
    }
    let name = given(&form, "field").unwrap_or_default();
    let value = given(&form, "value").map(|v| {
        if DraftFieldsInput::is_list(&name) {
            FieldValue::List(v.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect())
        } else {
            FieldValue::Text(v)
        }
    });
    let Some(fields) = DraftFieldsInput::one(&name, value) else {
        let e = OpError::from(domain::ValidationError::new("field", "is not a field of a draft"));
        return refused(&state, &p, &csrf, &id, e, None).await;
    };
    let input = UpdateDraftInput { fields: Some(fields), ..nothing(&id) };
    match call::<UpdateDraft>(&state, &p, input).await {
        Ok(_) => see_other(&format!("{}/me/drafts/{}#field-{name}", state.public_url, id.as_str())),
        Err(e) => refused(&state, &p, &csrf, &id, e, None).await,
    }
}

/// The rows of a list form that hold anything, in order: each row's number and its values by name.
fn filled_rows(form: &[(String, String)]) -> BTreeMap<usize, BTreeMap<String, String>> {
    let mut by_row: BTreeMap<usize, BTreeMap<String, String>> = BTreeMap::new();
    for (k, v) in form {
        if let Some((name, i)) = k.rsplit_once('.')
            && let Ok(i) = i.parse::<usize>()
            && !v.trim().is_empty()
        {
            by_row.entry(i).or_default().insert(name.to_owned(), v.trim().to_owned());
        }
    }
    by_row
}

/// What update_draft is sent for one part's form, and for a list the row each sent item came from.
/// A row with anything in it is sent whole: a required part left blank is sent empty, so the
/// operation's refusal names it. `None` for a part we do not have.
fn to_update(id: &str, part: &str, form: &[(String, String)]) -> Option<(UpdateDraftInput, Vec<usize>)> {
    let by_row = filled_rows(form);
    let rows: Vec<usize> = by_row.keys().copied().collect();
    let text = |m: &BTreeMap<String, String>, k: &str| m.get(k).cloned().unwrap_or_default();
    let opt = |m: &BTreeMap<String, String>, k: &str| m.get(k).cloned();
    let links = |group: &str| -> BTreeMap<String, String> {
        PLATFORMS.iter().filter_map(|p| given(form, &format!("{group}.{p}")).map(|v| ((*p).to_owned(), v))).collect()
    };
    let base = nothing(id);
    let update = match part {
        "faqs" => UpdateDraftInput {
            faqs: Some(
                by_row
                    .values()
                    .map(|m| FaqInput { question: text(m, "question"), answer: text(m, "answer") })
                    .collect(),
            ),
            ..base
        },
        "founders" => UpdateDraftInput {
            founders: Some(
                by_row
                    .values()
                    .map(|m| FounderInput { name: text(m, "name"), title: opt(m, "title"), bio: opt(m, "bio") })
                    .collect(),
            ),
            ..base
        },
        "milestones" => UpdateDraftInput {
            milestones: Some(
                by_row
                    .values()
                    .map(|m| MilestoneInput {
                        date: text(m, "date"),
                        title: text(m, "title"),
                        description: opt(m, "description"),
                        url: opt(m, "url"),
                    })
                    .collect(),
            ),
            ..base
        },
        "socials" => {
            return Some((
                UpdateDraftInput {
                    company_socials: Some(links("company")),
                    founder_socials: Some(links("founder")),
                    ..base
                },
                vec![],
            ));
        }
        "story" => {
            let story = StoryInput::default().with_sections(|name| given(form, name));
            return Some((UpdateDraftInput { story: Some(story), ..base }, vec![]));
        }
        "seo" => {
            let seo = SeoInput { title: given(form, "title"), meta: given(form, "meta") };
            return Some((UpdateDraftInput { seo: Some(seo), ..base }, vec![]));
        }
        "competitor" => {
            return Some((
                UpdateDraftInput { competitor_url: Some(given(form, "url").unwrap_or_default()), ..base },
                vec![],
            ));
        }
        _ => return None,
    };
    Some((update, rows))
}

/// A refusal's field path with the list index of the sent item replaced by its row on the page.
fn renumber(field: &str, part: &str, rows: &[usize]) -> String {
    let Some(rest) = field.strip_prefix(part).and_then(|r| r.strip_prefix('[')) else { return field.to_owned() };
    let Some((i, tail)) = rest.split_once(']') else { return field.to_owned() };
    match i.parse::<usize>().ok().and_then(|i| rows.get(i)) {
        Some(row) => format!("{part}[{row}]{tail}"),
        None => field.to_owned(),
    }
}

/// Saves one part of the draft beyond its fields (FAQs, founders, socials, story, milestones, SEO,
/// competitor) through update_draft, replacing that part as the API does.
pub async fn edit_part(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    form: web::Form<Vec<(String, String)>>,
) -> HttpResponse {
    let (id, part) = path.into_inner();
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    let Some((input, rows)) = to_update(&id, &part, &form) else {
        return failed(&state, &p, &OpError::NotFound("page"));
    };
    if !same(&state, given(&form, "csrf").as_deref().unwrap_or_default(), &csrf) {
        return expired(&state, &p, &csrf, &id).await;
    }
    match call::<UpdateDraft>(&state, &p, input).await {
        Ok(_) => see_other(&format!("{}/me/drafts/{id}#{part}", state.public_url)),
        Err(e) => refused(&state, &p, &csrf, &id, e, Some((&part, &rows))).await,
    }
}

/// Saves the draft as the maker's listing (submit_draft), then shows their listings.
pub async fn submit(
    state: web::Data<State>,
    req: HttpRequest,
    id: web::Path<String>,
    form: web::Form<crate::web::CsrfOnly>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    if !same(&state, &form.csrf, &csrf) {
        return expired(&state, &p, &csrf, &id).await;
    }
    match call::<SubmitDraft>(&state, &p, DraftIdInput { id: id.to_string() }).await {
        Ok(_) => see_other(&format!("{}/me/listings", state.public_url)),
        Err(e) => refused(&state, &p, &csrf, &id, e, None).await,
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(
        web::resource("/me/drafts/{id}")
            .route(web::get().to(draft))
            .route(web::post().to(edit_field))
            .default_service(na()),
    )
    .service(web::resource("/me/drafts/{id}/submit").route(web::post().to(submit)).default_service(na()))
    .service(web::resource("/me/drafts/{id}/{part}").route(web::post().to(edit_part)).default_service(na()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn blank_rows_are_not_sent_and_refusals_name_the_row() {
        let f = form(&[
            ("csrf", "t"),
            ("question.0", " Why? "),
            ("answer.0", "Because."),
            ("question.1", ""),
            ("answer.1", "  "),
            ("question.2", "Only a question"),
            ("answer.2", ""),
        ]);
        let (update, rows) = to_update("d", "faqs", &f).unwrap();
        let faqs: Vec<(String, String)> = update.faqs.unwrap().into_iter().map(|f| (f.question, f.answer)).collect();
        assert_eq!(faqs, vec![("Why?".into(), "Because.".into()), ("Only a question".into(), String::new())]);
        assert_eq!(rows, vec![0, 2]);
        assert_eq!(renumber("faqs[1].answer", "faqs", &rows), "faqs[2].answer");
        assert_eq!(renumber("faqs", "faqs", &rows), "faqs");
        assert_eq!(renumber("founders[0].name", "faqs", &rows), "founders[0].name");
        assert!(to_update("d", "votes", &f).is_none());
    }

    #[test]
    fn socials_story_seo_and_competitor_send_what_is_filled() {
        let f = form(&[
            ("company.github", "https://github.com/acme"),
            ("company.x", " "),
            ("founder.linkedin", "https://linkedin.com/in/ann"),
        ]);
        let (u, _) = to_update("d", "socials", &f).unwrap();
        assert_eq!(
            u.company_socials.unwrap().into_iter().collect::<Vec<_>>(),
            vec![("github".to_owned(), "https://github.com/acme".to_owned())]
        );
        assert_eq!(u.founder_socials.unwrap().len(), 1);
        let (u, _) =
            to_update("d", "story", &form(&[("title", "How it began"), ("problem", "Cats"), ("lessons", "")])).unwrap();
        let story = u.story.unwrap();
        assert_eq!(
            (story.title.as_deref(), story.problem.as_deref(), story.lessons),
            (Some("How it began"), Some("Cats"), None)
        );
        assert_eq!(to_update("d", "competitor", &form(&[("url", "")])).unwrap().0.competitor_url.as_deref(), Some(""));
        let seo = to_update("d", "seo", &form(&[("title", "T"), ("meta", "")])).unwrap().0.seo.unwrap();
        assert_eq!((seo.title.as_deref(), seo.meta), (Some("T"), None));
    }

    #[test]
    fn lists_get_blank_rows_up_to_their_bound() {
        assert_eq!(rows(1, 2, 10), 3);
        assert_eq!(rows(9, 2, 10), 10);
        assert_eq!(rows(10, 2, 10), 10);
        assert_eq!(rows(0, 1, 6), 1);
        assert_eq!(with_blanks(&["Ann"], 1, 6, |n| *n, ""), vec!["Ann", ""]);
    }
}
