//! The contract as a reviewed diff: the OpenAPI document every client and the MCP tools are built from
//! is snapshotted (insta); a change to any operation's path, schema, bound, status or description shows
//! up as a snapshot change to accept (`cargo insta review`, or INSTA_UPDATE=always) or fix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn the_openapi_document() {
    let doc = operations::openapi::document(&operations::registry(), "https://launch.test");
    // serde_json's map order depends on a feature other crates turn on; the snapshot sorts keys.
    insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("openapi", doc);
    });
}
