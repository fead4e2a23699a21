//! The launch calendar: a week's launches, ranked, and those scheduled for it.

use super::{Meta, Row, public_page, read, render, votes, with_head};
use crate::server::State;
use crate::web::see_other;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use operations::OpResult;
use operations::public::launches::{GetLaunchWeek, WeekInput};

#[derive(Template)]
#[template(path = "site/week.html")]
struct WeekView<'a> {
    base: &'a str,
    week: &'a str,
    prev: String,
    next: String,
    ranked: Vec<Row<'a>>,
    scheduled: Vec<Row<'a>>,
}

pub async fn this_week(state: web::Data<State>) -> HttpResponse {
    see_other(&format!("{}/launches/this", state.public_url))
}

pub async fn launch_week(state: web::Data<State>, req: HttpRequest, week: web::Path<String>) -> HttpResponse {
    let week = week.into_inner();
    public_page(&state, &req, format!("week {week}"), "No such launch week.", move |state| {
        launch_week_page(state, week)
    })
    .await
}

/// The `launch_week` page for every visitor: its title and body.
async fn launch_week_page(state: web::Data<State>, week: String) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let w = read::<GetLaunchWeek>(&state, WeekInput { week }).await?;
    let monday = chrono::NaiveDate::parse_from_str(&w.week, "%Y-%m-%d").ok();
    let step =
        |days: i64| monday.map(|m| (m + chrono::Duration::days(days)).to_string()).unwrap_or_else(|| "this".into());
    let view = WeekView {
        base,
        week: &w.week,
        prev: step(-7),
        next: step(7),
        ranked: w.launches.iter().map(|r| Row::of(&r.listing, Some(r.rank.into()), votes(r.listing.votes))).collect(),
        scheduled: w.scheduled.iter().map(|l| Row::of(l, None, "upcoming".into())).collect(),
    };
    let path = format!("/launches/{}", w.week);
    let description = format!("The launches of the week of {}: live and scheduled, ranked by votes.", w.week);
    let meta = Meta::new("Launch calendar", &description, &path);
    Ok(("Launch calendar".to_owned(), with_head(base, &meta, render(&view)?)?))
}
