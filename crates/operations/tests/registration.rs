//! Open client registration (RFC 7591) with no database: what a network may register, and the hourly
//! duties forgetting the clients nobody allowed once they are a week old.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use chrono::{Duration, TimeZone, Utc};
use domain::ports::{FixedClock, OAuthStore};
use operations::oauth;
use std::sync::Arc;

#[tokio::test]
async fn the_hourly_duties_forget_clients_nobody_allowed_within_a_week() {
    let start = Utc.with_ymd_and_hms(2026, 11, 2, 9, 30, 0).unwrap();
    let clock = Arc::new(FixedClock::new(start));
    let store = common::store(true).await;
    let ticking = clock.clone();
    let app = common::app(store.clone(), |p| p.clock = ticking);
    let registered = oauth::register(&app, &common::registration("http://127.0.0.1:33333/callback"), "ip:192.0.2.1")
        .await
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    let id = registered["client_id"].as_str().unwrap().to_owned();

    clock.set(start + Duration::days(6) + Duration::hours(23));
    operations::lifecycle::duties(&app).await.unwrap();
    assert!(store.client(&id).await.unwrap().is_some(), "kept for a week");

    clock.set(start + Duration::days(7) + Duration::hours(1));
    operations::lifecycle::duties(&app).await.unwrap();
    assert_eq!(store.client(&id).await.unwrap(), None, "forgotten after a week nobody allowed it");
}
