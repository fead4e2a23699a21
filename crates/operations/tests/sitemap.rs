//! A listing sitemap file read a slice of ids at a time holds what the whole read holds, in the same
//! order, however the ids are sliced.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use futures::StreamExt;
use operations::sitemap::{PER_FILE, listing_files, listings_in_file, listings_in_file_by_slices};

#[tokio::test]
async fn a_sliced_listing_file_holds_every_live_listing_of_the_whole_read_in_order() {
    let store = common::store(true).await;
    demo_data::load_demo(store.as_ref(), demo_data::generate::DemoConfig::standard(chrono::Utc::now()), false)
        .await
        .unwrap();
    let app = common::app(store, |_| {});
    assert_eq!(listing_files(&app).await.unwrap(), 1);
    let whole = listings_in_file(&app, 1).await.unwrap();
    assert!(whole.len() > 300, "the demo's live listings: {}", whole.len());
    for ids in [3, 97, 2_000, PER_FILE] {
        let batches: Vec<_> = listings_in_file_by_slices(app.clone(), 1, ids).collect().await;
        assert_eq!(batches.len() as i64, (PER_FILE + ids - 1) / ids, "one read per {ids} ids of the file's range");
        let sliced: Vec<_> = batches.into_iter().flat_map(Result::unwrap).collect();
        assert_eq!(sliced, whole, "slices of {ids} ids");
    }
    // A file past the last reads nothing, slice by slice.
    let past: Vec<_> = listings_in_file_by_slices(app.clone(), 2, 5_000).collect().await;
    assert!(past.into_iter().all(|b| b.unwrap().is_empty()));
}
