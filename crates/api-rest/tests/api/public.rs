//! The public read operations over REST, against demo data: shapes, defaults and every bound at its
//! edge (the largest valid value and one past it).

use crate::helpers::{TestApp, spawn_app};
use serde_json::Value;

async fn demo() -> TestApp {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    app
}

async fn json(app: &TestApp, path: &str) -> (u16, Value) {
    let r = app.get(&format!("/api/v1{path}")).await;
    let status = r.status().as_u16();
    (status, r.json().await.unwrap())
}

/// Asserts a 400 whose details name `field`.
async fn refused(app: &TestApp, path: &str, field: &str) {
    let (status, body) = json(app, path).await;
    assert_eq!(status, 400, "{path}: {body}");
    assert_eq!(body["error"]["code"], "invalid_request", "{path}");
    let named: Vec<&str> =
        body["error"]["details"].as_array().unwrap().iter().filter_map(|d| d["field"].as_str()).collect();
    assert!(named.contains(&field), "{path}: details name {named:?}, expected {field}");
}

async fn accepted(app: &TestApp, path: &str) -> Value {
    let (status, body) = json(app, path).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

#[tokio::test]
async fn site_info_points_at_the_docs() {
    let app = demo().await;
    let body = accepted(&app, "/site").await;
    assert!(body["counts"]["live_listings"].as_u64().unwrap() >= 300);
    assert_eq!(body["counts"]["categories"], 41);
    assert_eq!(body["links"]["openapi"], format!("{}/api/v1/openapi.json", app.base));
    assert_eq!(body["links"]["mcp"], format!("{}/mcp", app.base));
    let doc = accepted(&app, "/openapi.json").await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["servers"][0]["url"], format!("{}/api/v1", app.base));
}

#[tokio::test]
async fn search_listings_defaults_and_bounds() {
    let app = demo().await;
    let first = accepted(&app, "/listings").await;
    let items = first["items"].as_array().unwrap();
    assert_eq!(items.len(), 20, "per_page defaults to 20");
    assert_eq!(first["pagination"]["page"], 1);
    for i in items {
        assert!(i["name"].is_string() && i["url"].is_string() && i["votes"].is_i64());
        assert_eq!(i["status"], "live", "status defaults to live");
    }
    let votes: Vec<i64> = items.iter().map(|i| i["votes"].as_i64().unwrap()).collect();
    assert!(votes.windows(2).all(|w| w[0] >= w[1]), "without q, relevance means most voted first");

    accepted(&app, "/listings?page=1000&per_page=100").await;
    refused(&app, "/listings?page=1001", "page").await;
    refused(&app, "/listings?page=0", "page").await;
    refused(&app, "/listings?per_page=101", "per_page").await;
    refused(&app, "/listings?per_page=0", "per_page").await;
    refused(&app, "/listings?page=abc", "page").await;
    accepted(&app, &format!("/listings?q={}", "a".repeat(200))).await;
    refused(&app, &format!("/listings?q={}", "a".repeat(201)), "q").await;
    accepted(&app, "/listings?country=de").await;
    refused(&app, "/listings?country=USA", "country").await;
    refused(&app, "/listings?country=1a", "country").await;
    accepted(&app, &format!("/listings?category={}", "a".repeat(220))).await;
    refused(&app, &format!("/listings?category={}", "a".repeat(221)), "category").await;
    refused(&app, "/listings?category=Not_A_Slug", "category").await;
    refused(&app, "/listings?stage=-x", "stage").await;
    accepted(&app, &format!("/listings?pricing_model={}", "p".repeat(40))).await;
    refused(&app, &format!("/listings?pricing_model={}", "p".repeat(41)), "pricing_model").await;
    accepted(&app, &format!("/listings?domain={}", "d".repeat(253))).await;
    refused(&app, &format!("/listings?domain={}", "d".repeat(254)), "domain").await;
    refused(&app, "/listings?sort=hot", "sort").await;
    refused(&app, "/listings?status=draft", "status").await;
    refused(&app, "/listings?perpage=3", "perpage").await;
    refused(&app, "/listings?page=1&page=2", "page").await;

    let upcoming = accepted(&app, "/listings?status=upcoming&per_page=100").await;
    assert!(!upcoming["items"].as_array().unwrap().is_empty());
    assert!(upcoming["items"].as_array().unwrap().iter().all(|i| i["status"] == "scheduled"));
    let found = accepted(&app, "/listings?q=workflow&sort=relevance").await;
    let total = found["pagination"]["total"].as_u64().unwrap();
    assert!(total >= 60, "a common word finds many listings: {total}");
    for sort in ["newest", "votes", "trending", "most_viewed", "most_followed"] {
        accepted(&app, &format!("/listings?sort={sort}")).await;
    }
}

#[tokio::test]
async fn categories_tree_and_counts() {
    let app = demo().await;
    let all = accepted(&app, "/categories").await;
    let tops = all["items"].as_array().unwrap();
    assert_eq!(tops.len(), 9);
    let subs: usize = tops.iter().map(|t| t["subcategories"].as_array().unwrap().len()).sum();
    assert_eq!(tops.len() + subs, 41, "include_empty defaults to true");
    for t in tops {
        let sum: u64 =
            t["subcategories"].as_array().unwrap().iter().map(|s| s["live_listings"].as_u64().unwrap()).sum();
        assert_eq!(t["live_listings_total"].as_u64().unwrap(), t["live_listings"].as_u64().unwrap() + sum);
    }
    let non_empty = accepted(&app, "/categories?include_empty=false").await;
    fn all_nodes(v: &Value) -> Vec<&Value> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| std::iter::once(t).chain(t["subcategories"].as_array().unwrap()))
            .collect()
    }
    assert!(all_nodes(&non_empty).iter().all(|n| n["live_listings_total"].as_u64().unwrap() > 0));
    refused(&app, "/categories?include_empty=maybe", "include_empty").await;
}

#[tokio::test]
async fn products_and_questions_come_from_the_database() {
    let app = demo().await;
    let products = accepted(&app, "/products").await;
    let launch = products["items"].as_array().unwrap().iter().find(|p| p["id"] == "launch").unwrap();
    assert_eq!((launch["price_cents"].as_i64(), launch["currency"].as_str()), (Some(4900), Some("USD")));
    assert_eq!(launch["vat_included"], false);
    use domain::ports::ProductRepository;
    let other = bootstrap::App::connect(&app.db.url).await.unwrap();
    other
        .store
        .set_price(&domain::product::ProductCode::parse("launch").unwrap(), domain::money::Cents::new(5900))
        .await
        .unwrap();
    let again = accepted(&app, "/products").await;
    let launch = again["items"].as_array().unwrap().iter().find(|p| p["id"] == "launch").unwrap();
    assert_eq!(launch["price_cents"], 5900, "prices are read from the database, never hard-coded");
    let questions = accepted(&app, "/interview-questions").await;
    let q = questions["items"].as_array().unwrap();
    assert_eq!(q.len(), 10);
    assert!(q.iter().all(|x| x["id"].as_i64().unwrap() >= 1 && x["question"].is_string()));
    refused(&app, "/products?x=1", "x").await;
}
