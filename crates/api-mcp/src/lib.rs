//! The MCP server: every REST operation as a tool (tool name = operationId) over Streamable HTTP at
//! `/mcp`, and over stdio for local clients.
//!
//! Architecture invariant: the only crate that knows MCP; it calls the same operation descriptions
//! as api-rest, so a bound cannot differ between the two.
//!
//! Status: not served yet. The tools arrive with the public read API; until then the binary says so
//! and exits with status 2 rather than pretending to serve.

/// What `launchdir-mcp` prints while the MCP server is not built.
pub const NOT_YET: &str = "launchdir-mcp: the MCP server is not available in this version yet; \
the REST API is served by `launchdir-api serve` (see README.md)";
