//! The MCP endpoint mounted by launchdir-api: the same operations as tools, spoken to as a client does
//! (JSON-RPC over Streamable HTTP; responses may come as an event stream).

use crate::helpers::{TestApp, spawn_app, spawn_app_with};
use serde_json::{Value, json};

/// Sends one JSON-RPC request to /mcp and returns the response message.
pub async fn rpc(app: &TestApp, method: &str, params: Value) -> Value {
    rpc_as(app, None, method, params).await
}

/// Posts one JSON-RPC request to /mcp, with an API key or token when `key` is given.
pub(crate) async fn post(app: &TestApp, key: Option<&str>, method: &str, params: Value) -> reqwest::Response {
    let mut req = app.client.post(format!("{}/mcp", app.base));
    if let Some(k) = key {
        req = req.header("Authorization", format!("Bearer {k}"));
    }
    req.header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
}

/// A JSON-RPC call on /mcp that the sign-in guard refuses: its HTTP status and its challenge.
pub async fn refused(app: &TestApp, key: Option<&str>, method: &str, params: Value) -> (u16, String) {
    let r = post(app, key, method, params).await;
    let www = r.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (r.status().as_u16(), www)
}

/// A JSON-RPC call on /mcp, with an API key when `key` is given.
pub async fn rpc_as(app: &TestApp, key: Option<&str>, method: &str, params: Value) -> Value {
    let r = post(app, key, method, params).await;
    assert_eq!(r.status(), 200, "{method}");
    let text = r.text().await.unwrap();
    let body = text.lines().find_map(|l| l.strip_prefix("data: ")).map_or(text.as_str(), |d| d);
    serde_json::from_str(body).unwrap()
}

#[tokio::test]
async fn tools_are_the_registered_operations() {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    let init = rpc(
        &app,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    )
    .await;
    assert_eq!(init["result"]["serverInfo"]["name"], "launchdir");
    assert!(init["result"]["instructions"].as_str().unwrap().contains("no tool votes"));
    let list = rpc(&app, "tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut want: Vec<&str> = operations::registry().iter().map(|o| o.id).collect();
    names.sort_unstable();
    want.sort_unstable();
    assert_eq!(names, want, "one tool per operation, named by operationId");
    // The OpenAPI document as REST serves it: the tools must take exactly its bodies, with the same
    // lists from the database (categories, interview questions, products) filled in.
    let doc: Value = app.get("/api/v1/openapi.json").await.json().await.unwrap();
    let mut bodies = 0;
    for t in tools {
        let op = operations::registry().into_iter().find(|o| o.id == t["name"]).unwrap();
        assert_eq!(t["annotations"]["readOnlyHint"], op.read_only, "{}", t["name"]);
        assert_eq!(t["inputSchema"]["additionalProperties"], false, "{}", t["name"]);
        assert!(!t["inputSchema"].to_string().contains("x-reference"), "{}: every list is filled in", t["name"]);
        let rest = &doc["paths"][op.path][op.method.as_str()];
        assert_eq!(rest["operationId"], t["name"]);
        if let Some(body) = rest["requestBody"]["content"]["application/json"]["schema"]["properties"].as_object() {
            bodies += 1;
            for (name, schema) in body {
                assert_eq!(
                    &t["inputSchema"]["properties"][name], schema,
                    "{}.{name}: as the REST body says",
                    t["name"]
                );
            }
        }
    }
    assert!(bodies >= 11, "operations with a body compared: {bodies}");
    let update = tools.iter().find(|t| t["name"] == "update_draft").unwrap();
    let cats = &update["inputSchema"]["properties"]["fields"]["oneOf"][0]["properties"]["categories"]["items"]["enum"];
    assert!(cats.as_array().unwrap().contains(&json!("Developer Tools")), "categories from the database: {cats}");
    let answer = tools.iter().find(|t| t["name"] == "answer_interview").unwrap();
    let ids = &answer["inputSchema"]["properties"]["answers"]["items"]["properties"]["question_id"]["enum"];
    assert!(!ids.as_array().unwrap().is_empty(), "interview question ids from the database");
    let checkout = tools.iter().find(|t| t["name"] == "create_checkout").unwrap();
    let shapes = checkout["inputSchema"]["properties"]["items"]["items"]["oneOf"].as_array().unwrap();
    assert!(shapes.iter().any(|s| s["properties"]["product"]["enum"].as_array().unwrap().contains(&json!("launch"))));
}

#[tokio::test]
async fn tool_calls_answer_like_rest() {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    let call =
        rpc(&app, "tools/call", json!({"name": "search_listings", "arguments": {"q": "workflow", "per_page": 3}}))
            .await;
    let result = &call["result"];
    assert_eq!(result["isError"], false);
    let rest: Value = app.get("/api/v1/listings?q=workflow&per_page=3").await.json().await.unwrap();
    assert_eq!(result["structuredContent"], rest, "the tool and the route return the same thing");

    let bad =
        rpc(&app, "tools/call", json!({"name": "search_listings", "arguments": {"per_page": 101, "country": "USA"}}))
            .await;
    assert_eq!(
        bad["result"]["isError"], true,
        "a bad argument is a tool error a model can act on, not a protocol error"
    );
    let fields: Vec<&str> = bad["result"]["structuredContent"]["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["per_page", "country"]);
    let unknown_arg =
        rpc(&app, "tools/call", json!({"name": "get_listing", "arguments": {"slug": "x", "extra": 1}})).await;
    assert_eq!(unknown_arg["result"]["structuredContent"]["error"]["details"][0]["field"], "extra");
    let missing =
        rpc(&app, "tools/call", json!({"name": "get_listing", "arguments": {"slug": "no-such-listing"}})).await;
    assert_eq!(missing["result"]["structuredContent"]["error"]["code"], "not_found");
    let no_tool = rpc(&app, "tools/call", json!({"name": "vote", "arguments": {}})).await;
    assert!(no_tool["error"].is_object(), "there is no voting tool");
}

#[tokio::test]
async fn no_mcp_leaves_the_endpoint_out() {
    let app = spawn_app_with(test_support::sqlite(), false, true).await;
    app.wait_ready().await;
    let r = app.client.post(format!("{}/mcp", app.base)).json(&json!({})).send().await.unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn foreign_host_headers_are_refused() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let r = app
        .client
        .post(format!("{}/mcp", app.base))
        .header("host", "evil.example")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "DNS-rebinding protection: only our own host names are served");
}

/// What a script sends /mcp that is not a JSON-RPC message over Streamable HTTP gets the CONTRACT's
/// error shape, with the status that says what is wrong: a body that is not JSON, or JSON that is no
/// JSON-RPC message, is a 400 naming `body` (rmcp answered 415, "Unsupported Media Type", to a body
/// sent as application/json, in plain text); a wrong content type 415, a missing `Accept` 406, GET
/// and DELETE a 405 with `Allow: POST`, a foreign Host 403, an unknown protocol version 400. The
/// JSON-RPC errors rmcp writes itself (application/json) are left as they are.
#[tokio::test]
async fn transport_errors_on_mcp_are_json_in_the_contract_shape() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let url = format!("{}/mcp", app.base);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let both = "application/json, text/event-stream";
    let send = |method: reqwest::Method, ctype: &'static str, accept: &'static str, body: &'static str| {
        let mut r = app.client.request(method, &url).header("mcp-protocol-version", "2025-06-18").body(body);
        if !ctype.is_empty() {
            r = r.header("content-type", ctype);
        }
        if !accept.is_empty() {
            r = r.header("accept", accept);
        }
        r
    };
    let post = reqwest::Method::POST;
    let cases = [
        (send(post.clone(), "application/json", both, "{"), 400, "invalid_request"),
        (send(post.clone(), "application/json", both, "not json at all"), 400, "invalid_request"),
        (send(post.clone(), "application/json", both, r#"{"foo":1}"#), 400, "invalid_request"),
        (
            send(post.clone(), "application/json", both, r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            400,
            "invalid_request",
        ),
        (send(post.clone(), "text/plain", both, ping), 415, "unsupported_media_type"),
        (send(post.clone(), "application/json", "", ping), 406, "not_acceptable"),
        (send(post.clone(), "application/json", "application/json", ping), 406, "not_acceptable"),
        (send(reqwest::Method::GET, "", both, ""), 405, "method_not_allowed"),
        (send(reqwest::Method::DELETE, "", both, ""), 405, "method_not_allowed"),
        (send(post.clone(), "application/json", both, ping).header("host", "evil.example"), 403, "forbidden"),
        (
            app.client
                .post(&url)
                .header("mcp-protocol-version", "1999-01-01")
                .header("content-type", "application/json")
                .header("accept", both)
                .body(ping),
            400,
            "invalid_request",
        ),
    ];
    for (i, (req, status, code)) in cases.into_iter().enumerate() {
        let r = req.send().await.unwrap();
        assert_eq!(r.status().as_u16(), status, "case {i}");
        assert_eq!(r.headers()["content-type"], "application/json", "case {i}");
        if status == 405 {
            assert_eq!(r.headers()["allow"], "POST", "case {i}");
        }
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], code, "case {i}: {body}");
        assert!(!body["error"]["message"].as_str().unwrap().is_empty(), "case {i}");
        if status == 400 {
            let field = if i < 4 { "body" } else { "MCP-Protocol-Version" };
            assert_eq!(body["error"]["details"][0]["field"], field, "case {i}: {body}");
        }
    }
    // A well-formed message is still answered, and a JSON-RPC error rmcp writes is left as it is.
    let r = send(post.clone(), "application/json", both, ping).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = send(post, "application/json", both, r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#);
    let text = r.send().await.unwrap().text().await.unwrap();
    let body = text.lines().find_map(|l| l.strip_prefix("data: ")).map_or(text.as_str(), |d| d);
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["id"], 7, "{body}");
    assert_eq!(body["error"]["code"], -32601, "JSON-RPC's method not found: {body}");
}

/// Protocol 2025-03-26 lets a client send JSON-RPC batches ("MUST support receiving" them); its
/// clients send no `MCP-Protocol-Version` header, and 2025-06-18 removed batching. A batch from such a
/// client is answered as one JSON array of the responses to its requests, in order (its notifications
/// get none; only notifications: 202). Each message counts against the rate limit, so a batch buys no
/// more calls than single requests; a batch has at most 10 messages. Before, rmcp refused every batch
/// (415, then 400 "not a JSON-RPC message").
#[tokio::test]
async fn a_2025_03_26_batch_is_answered_message_by_message() {
    let app = crate::helpers::spawn_app_configured(test_support::sqlite(), true, |a| a.rate_limit = 24).await;
    app.wait_ready().await;
    let url = format!("{}/mcp", app.base);
    let batch = |body: Value, version: Option<&str>| {
        let mut r = app
            .client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(v) = version {
            r = r.header("mcp-protocol-version", v);
        }
        r.body(body.to_string()).send()
    };
    let call = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/call", "params": {"name": "get_site_info", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}},
        {"foo": 1},
    ]);
    let r = batch(call.clone(), None).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    let answers: Vec<Value> = r.json().await.unwrap();
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!("two"), &json!(3), &Value::Null], "{answers:?}");
    assert_eq!(answers[0]["result"], json!({}), "ping");
    assert!(answers[1]["result"]["structuredContent"]["name"].is_string(), "{}", answers[1]);
    assert!(answers[2]["error"]["code"].is_i64(), "an unknown tool is an error: {}", answers[2]);
    assert_eq!(answers[3]["error"]["code"], -32600, "what is no message is an invalid request: {}", answers[3]);
    // The same with the header of 2025-03-26; with a later version's header it is no message at all.
    assert_eq!(batch(call.clone(), Some("2025-03-26")).await.unwrap().status(), 200);
    let r = batch(call, Some("2025-06-18")).await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["details"][0]["field"], "body", "{body}");
    // Only notifications: 202, no body.
    let r = batch(json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]), None).await.unwrap();
    assert_eq!(r.status(), 202);
    assert!(r.bytes().await.unwrap().is_empty());
    // An empty batch, and one of 11 messages, are refused whole.
    for n in [0, 11] {
        let msgs: Vec<Value> = (0..n).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"})).collect();
        let r = batch(Value::Array(msgs), None).await.unwrap();
        assert_eq!(r.status(), 400, "{n} messages");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["details"][0]["field"], "body", "{body}");
    }
    // A tool that needs sign-in, in a batch without a credential: the guard's 401, as for one call.
    let mine = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_my_listings", "arguments": {}}}]);
    assert_eq!(batch(mine, None).await.unwrap().status(), 401);
    // 24 a minute: the requests above counted 5 + 5 + 1 + 1 + 1 + 1 + 1 = 15 (a batch refused whole
    // counts once); two batches of 10 need 20 more, so the second is refused (without counting each
    // message, both passed).
    let tens: Vec<Value> = (0..10).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"})).collect();
    let statuses = [
        batch(Value::Array(tens.clone()), None).await.unwrap().status().as_u16(),
        batch(Value::Array(tens), None).await.unwrap().status().as_u16(),
    ];
    assert_eq!(statuses[1], 429, "each message counts against the rate limit: {statuses:?}");
}

/// A tool call whose `name` is given twice is refused before anything reads it, naming
/// `params.name`. (Before, the guard read the last name for its scope check while rmcp refused the
/// message as "method not found: tools/call".)
#[tokio::test]
async fn a_json_rpc_key_given_twice_is_a_400_naming_it() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let r = app
        .client
        .post(format!("{}/mcp", app.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_checkout","name":"get_site","arguments":{}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["details"][0]["field"], "params.name", "{v}");
}
