//! One listing of the maker's: launch it (free, with the week and place in its queue, or bought
//! through checkout), place the badge, edit its texts, post updates, add and delete milestones,
//! write the founders' story and answer the founder interview. Every form is CSRF-checked and runs
//! the same operation as the API as the signed-in person; a refusal is shown naming the field.

use super::draft::sentence;
use super::{call, failed, field, given, refusal, show};
use crate::server::State;
use crate::web::{same, see_other, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use domain::own::limits;
use domain::sections::STORY_SECTIONS;
use operations::OpError;
use operations::orders::{CreateCheckout, OrderInput, OrderItemInput};
use operations::own::{
    AddMilestone, AddMilestoneInput, AnswerIn, AnswerInterview, AnswerInterviewInput, ChooseFreeListing,
    DeleteMilestone, DeleteMilestoneInput, GetMyListing, ListingIdInput, MyListingOut, OwnFieldsInput,
    PostListingUpdate, PostListingUpdateInput, SetFounderStory, SetFounderStoryInput, UpdateMyListing,
    UpdateMyListingInput,
};
use operations::public::catalog::{InterviewQuestionOut, ListInterviewQuestions};
use operations::public::listings::MilestoneOut;

#[derive(Template)]
#[template(path = "maker/listing.html")]
struct MyListingView<'a> {
    base: &'a str,
    csrf: &'a str,
    /// A refusal or expiry, above everything; empty when there is none.
    notice: &'a str,
    l: &'a MyListingOut,
    /// Where the forms post: `/me/listings/{id}` and below.
    action: String,
    next_step: String,
    badge_check: String,
    /// The bounds of tagline, short description and description.
    limits: (usize, usize, usize),
    milestones: &'a [MilestoneOut],
    /// Each story section: its name, label and current text.
    story: Vec<(&'static str, String, String)>,
    questions: &'a [InterviewQuestionOut],
    answer_max: usize,
}

/// What the maker does next, in the site's words (the operation's `next_step` speaks of API calls).
fn next_step(l: &MyListingOut) -> String {
    let week = l.launch_week.as_deref().unwrap_or_default();
    match l.status.as_str() {
        "draft" => "Saved, not published. Launch it for free or buy a launch below.".into(),
        "awaiting_badge" => format!(
            "Free launch in the week of {week}, once our badge is on your homepage: paste the code below there; we look a few times a day."
        ),
        "scheduled" => format!("Scheduled: goes live on Monday {week}."),
        "live" => "Live: people can see and vote for it.".into(),
        "removed" => "Removed from the directory.".into(),
        "hidden" => format!(
            "Hidden by the site team: {}. It shows nowhere public until they restore it; nothing is lost. Reply to \
             the email we sent if you think it is a mistake.",
            l.hidden.as_ref().map_or("no reason recorded", |h| h.reason.as_str())
        ),
        other => other.to_owned(),
    }
}

async fn my_listing_page(
    state: &State,
    p: &Principal,
    csrf: &str,
    id: i64,
    notice: &str,
    status: StatusCode,
) -> HttpResponse {
    let base = &state.public_url;
    let l = match call::<GetMyListing>(state, p, ListingIdInput { listing_id: id }).await {
        Ok(l) => l,
        Err(e) => return failed(state, p, &e),
    };
    let questions = match call::<ListInterviewQuestions>(state, p, operations::public::catalog::NoInput {}).await {
        Ok(q) => q.items,
        Err(e) => return failed(state, p, &e),
    };
    let badge_check = match l.badge.as_ref().and_then(|b| b.last_check.as_ref()) {
        Some(c) => format!(
            "Last look {}: {}",
            chrono::DateTime::parse_from_rfc3339(&c.checked_at)
                .map_or_else(|_| c.checked_at.clone(), |t| t.format("%Y-%m-%d %H:%M UTC").to_string()),
            c.found.as_deref().unwrap_or(&c.detail)
        ),
        None => "We have not looked yet; the first look is queued.".to_owned(),
    };
    let story = STORY_SECTIONS
        .iter()
        .map(|name| {
            let text = l.profile.story.as_ref().and_then(|s| s.get(*name)).cloned().unwrap_or_default();
            (*name, sentence(name), text)
        })
        .collect();
    let view = MyListingView {
        base,
        csrf,
        notice,
        l: &l,
        action: format!("{base}/me/listings/{id}"),
        next_step: next_step(&l),
        badge_check,
        limits: (limits::TAGLINE, limits::SHORT_DESCRIPTION, limits::DESCRIPTION),
        milestones: l.profile.milestones.as_deref().unwrap_or_default(),
        story,
        questions: &questions,
        answer_max: domain::interview::InterviewAnswerText::MAX,
    };
    show(state, p, &l.profile.name, &view, status)
}

pub async fn my_listing(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    my_listing_page(&state, &p, &csrf, *id, "", StatusCode::OK).await
}

/// Runs an operation for one of the maker's listings from a form (`run`, given the person), then
/// goes where it says (a checkout page) or back to the listing, or shows the page with the refusal.
async fn listing_action<F, Fut>(
    state: &State,
    req: &HttpRequest,
    id: i64,
    form: &[(String, String)],
    run: F,
) -> HttpResponse
where
    F: FnOnce(Principal) -> Fut,
    Fut: std::future::Future<Output = Result<Option<String>, OpError>>,
{
    let Some((p, csrf)) = signed_in(state, req).await else { return see_other(&state.url("/signin")) };
    if !same(state, field(form, "csrf"), &csrf) {
        let notice = "This form expired. Please try again.";
        return my_listing_page(state, &p, &csrf, id, notice, StatusCode::FORBIDDEN).await;
    }
    match run(p.clone()).await {
        Ok(Some(to)) => see_other(&to),
        Ok(None) => see_other(&format!("{}/me/listings/{id}", state.public_url)),
        Err(e) => {
            let (msg, status) = refusal(&e, str::to_owned);
            let Some(status) = status else { return failed(state, &p, &e) };
            my_listing_page(state, &p, &csrf, id, &msg, status).await
        }
    }
}

type Form = web::Form<Vec<(String, String)>>;

/// Runs operation `O` on `input` for listing `id` from a form, then shows the listing's page at
/// `anchor` (or the refusal).
async fn form_op<O: operations::Operation>(
    state: &State,
    req: &HttpRequest,
    id: i64,
    form: &[(String, String)],
    input: O::Input,
    anchor: &str,
) -> HttpResponse {
    let back = format!("{}/me/listings/{id}{anchor}", state.public_url);
    listing_action(state, req, id, form, |p| async move { call::<O>(state, &p, input).await.map(|_| Some(back)) }).await
}

pub async fn choose_free(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>, form: Form) -> HttpResponse {
    form_op::<ChooseFreeListing>(&state, &req, *id, &form, ListingIdInput { listing_id: *id }, "").await
}

pub async fn buy_launch(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>, form: Form) -> HttpResponse {
    let id = *id;
    let st: &State = &state;
    listing_action(st, &req, id, &form, |p| async move {
        let launch = OrderItemInput {
            product: "launch".into(),
            listing_id: Some(id),
            week: None,
            categories: None,
            amount_cents: None,
        };
        let input = OrderInput { items: vec![launch], billing_country: None, vat_number: None };
        call::<CreateCheckout>(st, &p, input).await.map(|o| o.checkout_url)
    })
    .await
}

/// Looks for the badge on the homepage now (at most a few times an hour), then shows what was found.
pub async fn check_badge(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>, form: Form) -> HttpResponse {
    let id = *id;
    let back = format!("{}/me/listings/{id}#badge", state.public_url);
    let st: &State = &state;
    listing_action(st, &req, id, &form, |p| async move {
        let ctx = st.ctx.with_caller(operations::Caller::Principal(p));
        operations::own::check_badge_now(&ctx, id).await.map(|_| Some(back))
    })
    .await
}

pub async fn edit_listing(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>, form: Form) -> HttpResponse {
    let id = *id;
    let text = |name: &str| Some(Some(field(&form, name).trim().to_owned()));
    let fields = OwnFieldsInput {
        tagline: text("tagline"),
        short_description: text("short_description"),
        description: text("description"),
        ..Default::default()
    };
    let input = UpdateMyListingInput { listing_id: id, fields: Some(fields), socials: None, faqs: None };
    form_op::<UpdateMyListing>(&state, &req, id, &form, input, "").await
}

pub async fn post_update(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>, form: Form) -> HttpResponse {
    let id = *id;
    let input = PostListingUpdateInput {
        listing_id: id,
        title: field(&form, "title").to_owned(),
        body: field(&form, "body").to_owned(),
    };
    form_op::<PostListingUpdate>(&state, &req, id, &form, input, "").await
}

pub async fn add_milestone(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>, form: Form) -> HttpResponse {
    let id = *id;
    let input = AddMilestoneInput {
        listing_id: id,
        date: field(&form, "date").trim().to_owned(),
        title: field(&form, "title").trim().to_owned(),
        description: given(&form, "description"),
        url: given(&form, "url"),
    };
    form_op::<AddMilestone>(&state, &req, id, &form, input, "#milestones").await
}

pub async fn delete_milestone(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<(i64, i64)>,
    form: Form,
) -> HttpResponse {
    let (id, milestone_id) = path.into_inner();
    let input = DeleteMilestoneInput { listing_id: id, milestone_id };
    form_op::<DeleteMilestone>(&state, &req, id, &form, input, "#milestones").await
}

pub async fn set_story(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>, form: Form) -> HttpResponse {
    let id = *id;
    let input = SetFounderStoryInput { listing_id: id, ..Default::default() }.with_sections(|name| given(&form, name));
    form_op::<SetFounderStory>(&state, &req, id, &form, input, "#story").await
}

/// Saves the interview answers written (`answer.{question id}`); blank ones are not sent, so an
/// earlier answer stays. A refusal names the question's position among those sent.
pub async fn answer_interview(
    state: web::Data<State>,
    req: HttpRequest,
    id: web::Path<i64>,
    form: Form,
) -> HttpResponse {
    let id = *id;
    let mut answers = Vec::new();
    let mut unreadable = false;
    for (key, value) in form.iter() {
        let Some(qid) = key.strip_prefix("answer.") else { continue };
        if value.trim().is_empty() {
            continue;
        }
        match qid.parse::<i64>() {
            Ok(question_id) => answers.push(AnswerIn { question_id, answer: value.trim().to_owned() }),
            Err(_) => unreadable = true,
        }
    }
    let back = format!("{}/me/listings/{id}#interview", state.public_url);
    let st: &State = &state;
    listing_action(st, &req, id, &form, |p| async move {
        if unreadable {
            return Err(domain::ValidationError::new("answers", "name a question by its number").into());
        }
        if answers.is_empty() {
            return Err(domain::ValidationError::new("answers", "write at least one answer").into());
        }
        call::<AnswerInterview>(st, &p, AnswerInterviewInput { answers }).await.map(|_| Some(back))
    })
    .await
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    let post = |path: &str, to| web::resource(path.to_owned()).route(to).default_service(na());
    cfg.service(
        web::resource("/me/listings/{id}")
            .route(web::get().to(my_listing))
            .route(web::post().to(edit_listing))
            .default_service(na()),
    )
    .service(post("/me/listings/{id}/free", web::post().to(choose_free)))
    .service(post("/me/listings/{id}/badge-check", web::post().to(check_badge)))
    .service(post("/me/listings/{id}/buy", web::post().to(buy_launch)))
    .service(post("/me/listings/{id}/updates", web::post().to(post_update)))
    .service(post("/me/listings/{id}/milestones", web::post().to(add_milestone)))
    .service(post("/me/listings/{id}/milestones/{milestone_id}/delete", web::post().to(delete_milestone)))
    .service(post("/me/listings/{id}/story", web::post().to(set_story)))
    .service(post("/me/listings/{id}/interview", web::post().to(answer_interview)));
}
