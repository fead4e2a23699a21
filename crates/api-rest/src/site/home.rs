//! The home page: today's and this week's launches.

use super::{Meta, Row, public_page, read, render, with_head};
use crate::server::State;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use operations::OpResult;
use operations::public::launches::{ListLaunches, ListLaunchesInput, Section};
use serde_json::json;

#[derive(Template)]
#[template(path = "site/home.html")]
struct HomeView<'a> {
    base: &'a str,
    today: Vec<Row<'a>>,
    week: Vec<Row<'a>>,
}

pub async fn home(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    public_page(&state, &req, "home".into(), "", home_page).await
}

/// The `home` page for every visitor: its title and body.
async fn home_page(state: web::Data<State>) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let section =
        |section, per_page| ListLaunchesInput { section: Some(section), page: None, per_page: Some(per_page) };
    let today = read::<ListLaunches>(&state, section(Section::Today, 10)).await?;
    let week = read::<ListLaunches>(&state, section(Section::ThisWeek, 20)).await?;
    let view = HomeView {
        base,
        today: today.items.iter().map(Row::voted).collect(),
        week: week.items.iter().map(Row::voted).collect(),
    };
    let site = json!({
        "@context": "https://schema.org",
        "@type": "WebSite",
        "name": "launchdir",
        "url": format!("{base}/"),
        "potentialAction": {
            "@type": "SearchAction",
            "target": format!("{base}/search?q={{query}}"),
            "query-input": "required name=query",
        },
    });
    let description = "Product launches, ranked by people: today's and this week's launches, the boards, the calendar.";
    let meta = Meta {
        json_ld: vec![site],
        feed: Some(("This week's launches".to_owned(), "/feeds/launches.atom".to_owned())),
        ..Meta::new("Launches", description, "/")
    };
    Ok(("Launches".to_owned(), with_head(base, &meta, render(&view)?)?))
}
