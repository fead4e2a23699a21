//! The leaderboards: community votes this week and all time, the paid billboard (always labelled
//! paid), Domain Rating and reported revenue.

use super::{Meta, Row, describe, public_page, read, render, votes, with_head};
use crate::server::State;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use operations::public::launches::{GetLeaderboard, LeaderboardInput, LeaderboardItem};
use operations::{OpError, OpResult};
use serde::Deserialize;

/// The board names with how the page titles them; billboard says it is paid.
const BOARDS: [(&str, &str); 5] = [
    ("community-weekly", "This week, by community votes"),
    ("community-all-time", "All time, by community votes"),
    ("billboard", "Billboard — paid ranking"),
    ("domain-rating", "Domain Rating (third-party)"),
    ("revenue", "Reported revenue"),
];

/// Rows per leaderboard page.
const BOARD_PAGE: i64 = 100;

/// `?page=`, read leniently as a person's edited address deserves: what is not a page number is the
/// first page (a typed field made `?page=abc` a JSON error on an HTML page).
#[derive(Debug, Deserialize)]
pub struct PageQuery {
    page: Option<String>,
}

#[derive(Template)]
#[template(path = "site/leaderboard.html")]
struct BoardView<'a> {
    base: &'a str,
    board: &'a str,
    title: &'a str,
    description: &'a str,
    paid: bool,
    tabs: &'static [(&'static str, &'static str)],
    rows: Vec<Row<'a>>,
    /// "Page 2 of 5", or empty on a board of one page.
    lead: String,
    pager: Vec<(String, &'static str)>,
}

pub async fn leaderboard(
    state: web::Data<State>,
    req: HttpRequest,
    board: web::Path<String>,
    q: web::Query<PageQuery>,
) -> HttpResponse {
    let n = q.page.as_deref().and_then(|p| p.trim().parse::<i64>().ok()).unwrap_or(1).clamp(1, 1000);
    let board = board.into_inner();
    public_page(&state, &req, format!("board {board} {n}"), "No such leaderboard.", move |state| {
        leaderboard_page(state, board, n)
    })
    .await
}

/// A row's figure in words: money for the billboard, votes, else the number and what it counts.
fn metric(i: &LeaderboardItem) -> String {
    match i.metric.name {
        "billboard_cents" => format!("${:.2} paid", i.metric.value as f64 / 100.0),
        "votes" | "votes_this_week" => votes(i.metric.value),
        other => format!("{} {}", i.metric.value, other.replace('_', " ")),
    }
}

/// The `leaderboard` page for every visitor: its title and body.
async fn leaderboard_page(state: web::Data<State>, board: String, n: i64) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let Some((_, title)) = BOARDS.iter().find(|(b, _)| *b == board.as_str()) else {
        return Err(OpError::NotFound("leaderboard"));
    };
    let input = LeaderboardInput { board: board.clone(), week: None, page: Some(n), per_page: Some(BOARD_PAGE) };
    let b = read::<GetLeaderboard>(&state, input).await?;
    let pages = b.pagination.total_pages as i64;
    let link = |to: i64| format!("{base}/leaderboards/{board}?page={to}");
    let mut pager = Vec::new();
    if n > 1 {
        pager.push((link(n - 1), "← Higher ranks"));
    }
    if n < pages {
        pager.push((link(n + 1), "Lower ranks →"));
    }
    let view = BoardView {
        base,
        board: &board,
        title,
        description: &b.description,
        paid: b.paid,
        tabs: &BOARDS,
        rows: b.items.iter().map(|i| Row::of(&i.listing, Some(i.rank), metric(i))).collect(),
        lead: format!("Page {n} of {pages}"),
        pager,
    };
    let path = if n > 1 { format!("/leaderboards/{board}?page={n}") } else { format!("/leaderboards/{board}") };
    let description = describe(&b.description, title);
    let meta = Meta::new(title, &description, &path);
    Ok(((*title).to_owned(), with_head(base, &meta, render(&view)?)?))
}
