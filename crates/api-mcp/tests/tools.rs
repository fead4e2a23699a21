//! The MCP tools as a reviewed diff: names, titles, annotations, input and output schemas of every tool
//! are snapshotted (insta), so a change to what a model sees is accepted on purpose.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn the_tools_list() {
    let tools = serde_json::to_value(api_mcp::tools()).unwrap();
    assert_eq!(tools.as_array().unwrap().len(), 41);
    insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("tools", tools);
    });
}
