//! DNS lookups for claims through hickory-resolver: against `LAUNCHDIR_DNS_SERVER` (`ip:port`) when set,
//! else the system's resolvers (`/etc/resolv.conf`). Answers are never cached here, so a record the
//! claimant published a moment ago is seen on the next check (their resolver may still cache).
//!
//! Why hickory: a maintained, async, pure-Rust resolver that returns every TXT record with its strings
//! intact; the standard library resolves addresses only.

use async_trait::async_trait;
use domain::ports::{DnsError, DnsResolver};
use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::RData;
use hickory_resolver::{Resolver, TokioResolver};
use std::net::SocketAddr;
use std::time::Duration;

/// Looks up TXT records.
#[derive(Clone)]
pub struct HickoryDns {
    resolver: TokioResolver,
    /// What it asks, for logs and errors.
    server: String,
}

impl std::fmt::Debug for HickoryDns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HickoryDns").field("server", &self.server).finish_non_exhaustive()
    }
}

fn options(mut o: ResolverOpts) -> ResolverOpts {
    o.cache_size = 0;
    o.timeout = Duration::from_secs(3);
    o.attempts = 2;
    o
}

impl HickoryDns {
    /// Asks the server at `addr` (UDP, TCP when an answer is truncated).
    pub fn with_server(addr: SocketAddr) -> Result<Self, String> {
        let connections = [ConnectionConfig::udp(), ConnectionConfig::tcp()]
            .into_iter()
            .map(|mut c| {
                c.port = addr.port();
                c
            })
            .collect();
        let config =
            ResolverConfig::from_parts(None, vec![], vec![NameServerConfig::new(addr.ip(), true, connections)]);
        let mut builder = Resolver::builder_with_config(config, TokioRuntimeProvider::default());
        *builder.options_mut() = options(ResolverOpts::default());
        let resolver = builder.build().map_err(|e| format!("cannot build the DNS resolver for {addr}: {e}"))?;
        Ok(Self { resolver, server: addr.to_string() })
    }

    /// Asks the system's resolvers.
    pub fn system() -> Result<Self, String> {
        let mut builder =
            Resolver::builder_tokio().map_err(|e| format!("cannot read the system's DNS configuration: {e}"))?;
        let o = builder.options_mut().clone();
        *builder.options_mut() = options(o);
        let resolver = builder.build().map_err(|e| format!("cannot build the DNS resolver: {e}"))?;
        Ok(Self { resolver, server: "the system resolver".into() })
    }
}

#[async_trait]
impl DnsResolver for HickoryDns {
    async fn txt(&self, name: &str) -> Result<Vec<String>, DnsError> {
        // Fully qualified: never tried with the system's search domains.
        let fqdn = format!("{}.", name.trim_end_matches('.'));
        match self.resolver.txt_lookup(fqdn.as_str()).await {
            Ok(lookup) => Ok(lookup
                .answers()
                .iter()
                .filter_map(|r| match &r.data {
                    RData::TXT(txt) => Some(txt.to_string()),
                    _ => None,
                })
                .collect()),
            Err(e) if e.is_no_records_found() => Ok(Vec::new()),
            Err(e) => Err(DnsError(format!("{e} (asking {})", self.server))),
        }
    }
}

/// What the service uses when no resolver could be set up: every lookup says why.
#[derive(Debug, Clone)]
pub struct NoResolver(pub String);

#[async_trait]
impl DnsResolver for NoResolver {
    async fn txt(&self, _name: &str) -> Result<Vec<String>, DnsError> {
        Err(DnsError(format!("DNS is not configured: {}", self.0)))
    }
}
