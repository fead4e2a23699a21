//! Until stdio exists (it needs API keys), that command must say so and fail, never pretend to serve.

#[test]
fn stdio_refuses_clearly() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_launchdir-mcp"))
        .arg("stdio")
        .output()
        .expect("run launchdir-mcp");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not available yet"));
}
