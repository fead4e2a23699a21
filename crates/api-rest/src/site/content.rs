//! Founders, the blog and the Launch of the Week awards.

use super::{Meta, Row, breadcrumbs, describe, public_page, read, render, votes, with_head};
use crate::server::State;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use operations::OpResult;
use operations::public::content::{
    BlogPostOut, BlogPostSummary, FounderOut, GetBlogPost, GetFounder, ListAwards, ListAwardsInput, ListBlogPosts,
    ListBlogPostsInput,
};
use operations::public::listings::SlugInput;
use serde_json::json;

#[derive(Template)]
#[template(path = "site/founder.html")]
struct FounderView<'a> {
    base: &'a str,
    f: &'a FounderOut,
    companies: Vec<Row<'a>>,
}

#[derive(Template)]
#[template(path = "site/blog.html")]
struct BlogView<'a> {
    base: &'a str,
    posts: &'a [BlogPostSummary],
}

#[derive(Template)]
#[template(path = "site/post.html")]
struct PostView<'a> {
    p: &'a BlogPostOut,
    /// The post's Markdown as HTML (see [`markdown_html`]).
    body_html: String,
}

#[derive(Template)]
#[template(path = "site/awards.html")]
struct AwardsView<'a> {
    base: &'a str,
    rows: Vec<Row<'a>>,
}

pub async fn founder(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let slug = slug.into_inner();
    public_page(&state, &req, format!("founder {slug}"), "No such founder.", move |state| founder_page(state, slug))
        .await
}

/// The `founder` page for every visitor: its title and body.
async fn founder_page(state: web::Data<State>, slug: String) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let f = read::<GetFounder>(&state, SlugInput { slug }).await?;
    let body = render(&FounderView { base, f: &f, companies: f.companies.iter().map(Row::voted).collect() })?;
    let name = f.summary.name.as_str();
    let path = format!("/founders/{}", f.summary.slug);
    let description = describe(&f.summary.headline, &format!("{name}, a maker on launchdir"));
    let same_as: Vec<&String> = f.socials.values().collect();
    let person = json!({
        "@context": "https://schema.org",
        "@type": "Person",
        "name": name,
        "description": f.bio,
        "jobTitle": f.summary.headline,
        "url": format!("{base}{path}"),
        "sameAs": same_as,
    });
    let trail = [("Launches", "/".to_owned()), (name, path.clone())];
    let meta = Meta {
        kind: "profile",
        json_ld: vec![person, breadcrumbs(base, &trail)],
        ..Meta::new(name, &description, &path)
    };
    Ok((name.to_owned(), with_head(base, &meta, body)?))
}

pub async fn blog(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    public_page(&state, &req, "blog".into(), "", blog_page).await
}

/// The `blog` page for every visitor: its title and body.
async fn blog_page(state: web::Data<State>) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let posts = read::<ListBlogPosts>(&state, ListBlogPostsInput { q: None, page: None, per_page: Some(50) }).await?;
    let body = render(&BlogView { base, posts: &posts.items })?;
    let description = "Notes from launchdir on launching products and how the directory works.";
    Ok(("Blog".to_owned(), with_head(base, &Meta::new("Blog", description, "/blog"), body)?))
}

pub async fn blog_post(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let slug = slug.into_inner();
    public_page(&state, &req, format!("post {slug}"), "No such post.", move |state| blog_post_page(state, slug)).await
}

/// The `blog_post` page for every visitor: its title and body.
async fn blog_post_page(state: web::Data<State>, slug: String) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let p = read::<GetBlogPost>(&state, SlugInput { slug }).await?;
    let body = render(&PostView { p: &p, body_html: markdown_html(&p.body_markdown) })?;
    let title = p.summary.title.as_str();
    let path = format!("/blog/{}", p.summary.slug);
    let description = describe(&p.summary.summary, title);
    let article = json!({
        "@context": "https://schema.org",
        "@type": "BlogPosting",
        "headline": title,
        "description": description,
        "author": {"@type": "Person", "name": p.summary.author},
        "datePublished": p.summary.published_at,
        "mainEntityOfPage": format!("{base}{path}"),
        "publisher": {"@type": "Organization", "name": "launchdir", "url": base},
    });
    let trail = [("Launches", "/".to_owned()), ("Blog", "/blog".to_owned()), (title, path.clone())];
    let meta = Meta {
        kind: "article",
        json_ld: vec![article, breadcrumbs(base, &trail)],
        ..Meta::new(title, &description, &path)
    };
    Ok((title.to_owned(), with_head(base, &meta, body)?))
}

pub async fn awards(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    public_page(&state, &req, "awards".into(), "", awards_page).await
}

/// The `awards` page for every visitor: its title and body.
async fn awards_page(state: web::Data<State>) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let a = read::<ListAwards>(&state, ListAwardsInput { listing: None, page: None, per_page: Some(60) }).await?;
    let rows = a
        .items
        .iter()
        .map(|i| Row {
            award: &i.title,
            ..Row::of(&i.listing, None, format!("week of {} · {}", i.week, votes(i.votes)))
        })
        .collect();
    let body = render(&AwardsView { base, rows })?;
    let description = "Launch of the Week: the three launches with the most community votes, each week.";
    Ok(("Awards".to_owned(), with_head(base, &Meta::new("Awards", description, "/awards"), body)?))
}

/// Markdown to HTML for blog posts: raw HTML in the source is shown as text, and a link or image keeps
/// its address only when it is http, https, mailto or relative (never `javascript:` or `data:`).
pub fn markdown_html(src: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, html};
    let safe = |url: CowStr<'static>| -> CowStr<'static> {
        let u = url.trim().to_ascii_lowercase();
        let scheme = u.split_once(':').map(|(s, _)| s).filter(|s| !s.contains(['/', '?', '#']));
        match scheme {
            None | Some("http" | "https" | "mailto") => url,
            Some(_) => CowStr::Borrowed("#"),
        }
    };
    let events = Parser::new_ext(src, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|e| match e {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: safe(dest_url.into_static()), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Image { link_type, dest_url: safe(dest_url.into_static()), title, id })
        }
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::markdown_html;

    #[test]
    fn markdown_keeps_no_script() {
        let out = markdown_html(
            "# Hi\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](https://ok.example/a) [z](/blog) <img src=x onerror=alert(1)>",
        );
        assert!(out.contains("<h1>Hi</h1>"), "{out}");
        assert!(!out.contains("<script>") && out.contains("&lt;script&gt;"), "{out}");
        assert!(!out.contains("<img") && !out.contains("javascript:"), "{out}");
        assert!(out.contains(r#"href="https://ok.example/a""#) && out.contains(r#"href="/blog""#), "{out}");
        assert!(out.contains(r##"href="#""##), "{out}");
    }
}
