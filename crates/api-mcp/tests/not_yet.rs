//! Until the MCP server exists, the binary must say so and fail, never pretend to serve.

#[test]
fn both_commands_refuse_clearly() {
    for args in [&["serve"][..], &["stdio"][..]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_launchdir-mcp"))
            .args(args)
            .output()
            .expect("run launchdir-mcp");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not available"), "{args:?}");
    }
}
