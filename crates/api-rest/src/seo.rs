//! What search engines read besides the pages: `robots.txt` (what to crawl, where the sitemap is) and
//! the sitemaps — `/sitemap.xml`, an index of files of at most 50 000 addresses each: the live listings
//! (one file per 50 000 listing ids, each one indexed range read, so a directory of a million listings
//! is twenty quick files), founders, categories, launch weeks and blog posts. Every address is built
//! from the public URL.

use crate::server::State;
use crate::site::s;
use actix_web::http::header;
use actix_web::{HttpResponse, web};
use operations::badges::escape;
use operations::sitemap::PER_FILE;
use serde_json::{Value, json};

/// Weeks of the calendar the weeks sitemap lists, back from this one, and ahead.
const WEEKS_BACK: i64 = 26;
const WEEKS_AHEAD: i64 = 8;

fn xml(body: String) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/xml; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=600"))
        .body(body)
}

fn urlset(urls: impl Iterator<Item = (String, Option<String>)>) -> String {
    let mut out = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
"#,
    );
    for (loc, lastmod) in urls {
        out.push_str("<url><loc>");
        out.push_str(&escape(&loc));
        out.push_str("</loc>");
        if let Some(t) = lastmod {
            out.push_str(&format!("<lastmod>{}</lastmod>", escape(&t)));
        }
        out.push_str("</url>\n");
    }
    out.push_str("</urlset>\n");
    out
}

fn failed(e: operations::OpError) -> HttpResponse {
    tracing::error!(error = %e, "sitemap");
    actix_web::ResponseError::error_response(&crate::error::ApiError::from(e))
}

pub async fn robots(state: web::Data<State>) -> HttpResponse {
    let base = &state.public_url;
    let body = format!(
        "User-agent: *\nAllow: /\nDisallow: /me/\nDisallow: /account/\nDisallow: /checkout/\nDisallow: /oauth/\nDisallow: /claims/\nDisallow: /invites/\n\nSitemap: {base}/sitemap.xml\n"
    );
    HttpResponse::Ok().content_type("text/plain; charset=utf-8").body(body)
}

pub async fn index(state: web::Data<State>) -> HttpResponse {
    let base = &state.public_url;
    let files = match operations::sitemap::listing_files(&state.app).await {
        Ok(n) => n,
        Err(e) => return failed(e),
    };
    let mut out = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
"#,
    );
    let names = (1..=files)
        .map(|n| format!("listings-{n}.xml"))
        .chain(["founders.xml", "categories.xml", "weeks.xml", "blog.xml"].iter().map(|n| (*n).to_owned()));
    for name in names {
        out.push_str(&format!("<sitemap><loc>{}</loc></sitemap>\n", escape(&format!("{base}/sitemaps/{name}"))));
    }
    out.push_str("</sitemapindex>\n");
    xml(out)
}

/// Every page of a paged public read, up to one sitemap file's worth.
async fn all_items(state: &State, id: &str, input: Value) -> Result<Vec<Value>, operations::OpError> {
    let mut items = Vec::new();
    for page in 1..=i64::from(domain::paging::PageRequest::MAX_PAGE) {
        let mut input = input.clone();
        input["page"] = json!(page);
        input["per_page"] = json!(domain::paging::PageRequest::MAX_PER_PAGE);
        let r = crate::site::op(id).call(state.ctx.clone(), input).await?;
        let got = r["items"].as_array().cloned().unwrap_or_default();
        let last = got.len() < domain::paging::PageRequest::MAX_PER_PAGE as usize;
        items.extend(got);
        if last || items.len() as i64 >= PER_FILE {
            break;
        }
    }
    items.truncate(PER_FILE as usize);
    Ok(items)
}

pub async fn file(state: web::Data<State>, name: web::Path<String>) -> HttpResponse {
    let base = &state.public_url;
    let name = name.into_inner();
    let not_found = || actix_web::ResponseError::error_response(&crate::error::ApiError::not_found("sitemap"));
    if let Some(n) = name.strip_prefix("listings-").and_then(|r| r.strip_suffix(".xml")) {
        let Ok(n) = n.parse::<i64>() else { return not_found() };
        match operations::sitemap::listing_files(&state.app).await {
            Ok(files) if (1..=files).contains(&n) => {}
            Ok(_) => return not_found(),
            Err(e) => return failed(e),
        }
        return match operations::sitemap::listings_in_file(&state.app, n).await {
            Ok(rows) => xml(urlset(rows.into_iter().map(|(slug, at)| {
                (format!("{base}/listings/{slug}"), Some(at.format("%Y-%m-%dT%H:%M:%SZ").to_string()))
            }))),
            Err(e) => failed(e),
        };
    }
    let urls: Result<Vec<(String, Option<String>)>, operations::OpError> = match name.as_str() {
        "founders.xml" => all_items(&state, "list_founders", json!({}))
            .await
            .map(|items| items.iter().map(|f| (format!("{base}/founders/{}", s(f, "slug")), None)).collect()),
        "categories.xml" => crate::site::op("list_categories").call(state.ctx.clone(), json!({})).await.map(|tree| {
            fn walk(base: &str, n: &Value, out: &mut Vec<(String, Option<String>)>) {
                out.push((format!("{base}/categories/{}", s(n, "slug")), None));
                for c in n["subcategories"].as_array().into_iter().flatten() {
                    walk(base, c, out);
                }
            }
            let mut out = vec![(format!("{base}/categories"), None)];
            for n in tree["items"].as_array().into_iter().flatten() {
                walk(base, n, &mut out);
            }
            out
        }),
        "weeks.xml" => {
            let this = domain::week::LaunchWeek::of(state.app.now());
            Ok((-WEEKS_BACK..=WEEKS_AHEAD)
                .map(|k| (format!("{base}/launches/{}", this.plus_weeks(k).monday()), None))
                .collect())
        }
        "blog.xml" => {
            all_items(&state, "list_blog_posts", json!({})).await.map(|items| {
                std::iter::once((format!("{base}/blog"), None))
                    .chain(items.iter().map(|p| {
                        (format!("{base}/blog/{}", s(p, "slug")), p["published_at"].as_str().map(str::to_owned))
                    }))
                    .collect()
            })
        }
        _ => return not_found(),
    };
    match urls {
        Ok(urls) => xml(urlset(urls.into_iter())),
        Err(e) => failed(e),
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(web::resource("/robots.txt").route(web::get().to(robots)).default_service(na()))
        .service(web::resource("/sitemap.xml").route(web::get().to(index)).default_service(na()))
        .service(web::resource("/sitemaps/{name}").route(web::get().to(file)).default_service(na()));
}
