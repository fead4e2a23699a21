//! Configuration: every flag has an environment twin and the flag wins (clap's `env`), as
//! CONTRACT.md fixes. Defaults are the embedded ones: SQLite in the working directory, loopback bind.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// SQLite (`sqlite://file.db?mode=rwc`, created on first run) or PostgreSQL (`postgres://…`).
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://launchdir.db?mode=rwc")]
    pub database_url: String,

    /// The most connections this process opens to the database, 1 to 1 000 (unset: 16 on
    /// PostgreSQL, 8 on SQLite). Several instances on one PostgreSQL server together must stay under
    /// its `max_connections` (100 by default).
    #[arg(long, env = "LAUNCHDIR_DATABASE_MAX_CONNECTIONS", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub database_max_connections: Option<u32>,

    /// The most searches (lists by a filter; on PostgreSQL text searches too) this process runs in
    /// the database at once, 1 to 1 000 (unset: this machine's cores plus one); the others wait their
    /// turn, up to 10 s. Raise it when PostgreSQL has more cores than this machine.
    #[arg(long, env = "LAUNCHDIR_DATABASE_SEARCH_SLOTS", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub database_search_slots: Option<u32>,
}

/// The highest `--rate-limit`: one request a microsecond (`Quota::MAX_PER_MINUTE`).
const MAX_RATE_LIMIT: i64 = domain::ratelimit::Quota::MAX_PER_MINUTE as i64;

/// The sender of emails unless `LAUNCHDIR_MAIL_FROM` says otherwise.
pub const DEFAULT_MAIL_FROM: &str = "launchdir <no-reply@launchdir.invalid>";

/// Everything that reaches outside: the crawler, email and the drafting model.
#[derive(Debug, Clone, Args)]
pub struct OutboundArgs {
    /// `host:port` pairs the crawler may read although they are private addresses (intranet sites,
    /// test fixtures); comma-separated.
    #[arg(long, env = "LAUNCHDIR_CRAWLER_ALLOWED_HOSTS", value_delimiter = ',')]
    pub crawler_allowed_hosts: Vec<String>,

    /// SMTP server emails are delivered through (`smtp://host:port`, `smtps://user:pass@host`); unset:
    /// emails stay in the outbox (`admin outbox`).
    #[arg(long, env = "LAUNCHDIR_SMTP_URL")]
    pub smtp_url: Option<String>,

    /// Sender address of emails.
    #[arg(long, env = "LAUNCHDIR_MAIL_FROM", default_value = DEFAULT_MAIL_FROM)]
    pub mail_from: String,

    /// An OpenAI-compatible chat-completions server (`https://api.example/v1`); unset: the built-in
    /// extractive drafter.
    #[arg(long, env = "LAUNCHDIR_LLM_BASE_URL")]
    pub llm_base_url: Option<String>,

    #[arg(long, env = "LAUNCHDIR_LLM_MODEL")]
    pub llm_model: Option<String>,

    #[arg(long, env = "LAUNCHDIR_LLM_API_KEY", hide_env_values = true)]
    pub llm_api_key: Option<String>,

    /// The payment gateway of the checkout page: `sandbox` (a clearly marked test payment) or `stripe`.
    /// Unset: `sandbox` when the public URL is loopback; any other deployment must choose (`serve`
    /// refuses to start without it), so a public service never takes test payments by accident.
    #[arg(long, env = "LAUNCHDIR_PAYMENTS")]
    pub payments: Option<String>,

    #[arg(long, env = "STRIPE_SECRET_KEY", hide_env_values = true)]
    pub stripe_secret_key: Option<String>,

    /// The signing secret of the Stripe webhook endpoint (`/webhooks/stripe`).
    #[arg(long, env = "STRIPE_WEBHOOK_SECRET", hide_env_values = true)]
    pub stripe_webhook_secret: Option<String>,

    /// Stripe's API address (a stand-in's in tests).
    #[arg(long, env = "STRIPE_API_BASE", default_value = "https://api.stripe.com")]
    pub stripe_api_base: String,

    /// VIES's REST API (`https://ec.europa.eu/taxation_customs/vies/rest-api`); unset: VAT numbers are
    /// checked by format only.
    #[arg(long, env = "LAUNCHDIR_VIES_URL")]
    pub vies_url: Option<String>,

    /// `ip:port` of the DNS resolver DNS claims are checked with; unset: the system's resolvers.
    #[arg(long, env = "LAUNCHDIR_DNS_SERVER")]
    pub dns_server: Option<std::net::SocketAddr>,
}

impl Default for OutboundArgs {
    fn default() -> Self {
        Self {
            crawler_allowed_hosts: Vec::new(),
            smtp_url: None,
            mail_from: DEFAULT_MAIL_FROM.to_owned(),
            llm_base_url: None,
            llm_model: None,
            llm_api_key: None,
            dns_server: None,
            payments: None,
            stripe_secret_key: None,
            stripe_webhook_secret: None,
            stripe_api_base: "https://api.stripe.com".into(),
            vies_url: None,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Listen address.
    #[arg(long, env = "LAUNCHDIR_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,

    #[command(flatten)]
    pub db: DatabaseArgs,

    /// Base of every link the service hands out; `http://` + the bind address when unset.
    #[arg(long, env = "LAUNCHDIR_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Load the demo content from fixtures/ into an empty database.
    #[arg(long)]
    pub demo_data: bool,

    /// Do not mount the MCP endpoint at /mcp.
    #[arg(long)]
    pub no_mcp: bool,

    /// Longest a public read (profile, search page, board …) is served from this instance's cache;
    /// 0 turns the cache off. A write on any instance empties every instance's cache within about a
    /// second (the shared change counter), so this is only the backstop.
    #[arg(long, env = "LAUNCHDIR_READ_CACHE_SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub read_cache_secs: u64,

    /// Threads serving HTTP requests; unset: one per core this process may use (at most 512). Where
    /// PostgreSQL runs on the same cores and most reads reach it, fewer threads than cores served the
    /// boards faster and profiles slower: docs/OPERATIONS.md gives the measurements.
    #[arg(long, env = "LAUNCHDIR_HTTP_WORKERS",
          value_parser = clap::value_parser!(u16).range(1..=i64::from(crate::limits::MOST_HTTP_WORKERS)))]
    pub http_workers: Option<u16>,

    /// How Linux schedules the service's threads: `batch` (the default) lets a thread woken by a
    /// request or a database's answer wait for the running one's turn to end instead of taking its core
    /// at once; `normal` is the kernel's default. Where PostgreSQL shares the cores, `batch` served the
    /// uncached boards and categories 10–72 % faster and left the other reads within their spread:
    /// docs/OPERATIONS.md gives the measurements. Elsewhere than Linux, nothing is changed.
    #[arg(long, env = "LAUNCHDIR_CPU_POLICY", value_enum, default_value_t = crate::limits::CpuPolicy::Batch)]
    pub cpu_policy: crate::limits::CpuPolicy,

    /// Requests per minute per client (API key, else client IP), on every operation, page and tool.
    /// At most 60 000 000: one request a microsecond, the finest spacing the limiter counts (above a
    /// million a minute the spacing is a whole number of microseconds, so the limit rounds up).
    #[arg(long, env = "LAUNCHDIR_RATE_LIMIT", default_value_t = 600,
          value_parser = clap::value_parser!(u32).range(1..=MAX_RATE_LIMIT))]
    pub rate_limit: u32,

    /// Seconds a request's body may take to arrive after its head; a body still coming then is
    /// answered 408 and its connection closed, so a client trickling a body holds nothing for long.
    #[arg(long, env = "LAUNCHDIR_BODY_TIMEOUT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub body_timeout_secs: u64,

    /// Redis holding the rate-limit state of every instance (`redis://host:port`); unset: each instance
    /// counts in its own memory.
    #[arg(long, env = "LAUNCHDIR_REDIS_URL")]
    pub redis_url: Option<String>,

    /// Load balancers and proxies whose `X-Forwarded-For` is believed (comma list of CIDRs or single
    /// addresses); from any other peer the connecting address is the client, whatever headers it sends.
    #[arg(long, env = "LAUNCHDIR_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_cidr)]
    pub trusted_proxies: Vec<ipnet::IpNet>,

    /// Networks besides loopback that may read `/metrics` on the service's port (comma list of CIDRs
    /// or single addresses). Ignored when `--metrics-bind` is set.
    #[arg(long, env = "LAUNCHDIR_METRICS_ALLOW", value_delimiter = ',', value_parser = parse_cidr)]
    pub metrics_allow: Vec<ipnet::IpNet>,

    /// Serve `/metrics` on this address of its own (say `127.0.0.1:9464`), to whoever reaches it, and
    /// not on the service's port.
    #[arg(long, env = "LAUNCHDIR_METRICS_BIND")]
    pub metrics_bind: Option<std::net::SocketAddr>,

    #[command(flatten)]
    pub outbound: OutboundArgs,

    #[command(flatten)]
    pub secrets: crate::keys::SecretArgs,
}

/// A CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address (`10.0.0.7`, as `/32` or `/128`).
pub fn parse_cidr(s: &str) -> Result<ipnet::IpNet, String> {
    let s = s.trim();
    s.parse::<ipnet::IpNet>()
        .map(|n| n.trunc())
        .or_else(|_| s.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{s:?} is neither a CIDR (10.0.0.0/8) nor an IP address"))
}

impl ServeArgs {
    /// The public URL without a trailing slash.
    pub fn public_url(&self, bound: &str) -> String {
        self.public_url.clone().unwrap_or_else(|| format!("http://{bound}")).trim_end_matches('/').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    #[test]
    fn defaults_and_flags() {
        let c = Cli::try_parse_from(["x", "--bind", "0.0.0.0:9", "--demo-data"]).unwrap();
        assert_eq!(c.serve.bind, "0.0.0.0:9");
        assert!(c.serve.demo_data && !c.serve.no_mcp);
        assert_eq!(c.serve.read_cache_secs, 60);
        assert_eq!((c.serve.rate_limit, c.serve.redis_url.as_deref()), (600, None));
        assert!(Cli::try_parse_from(["x", "--rate-limit", "0"]).is_err());
        // The highest limit is one request a microsecond, and nothing above it.
        assert_eq!(Cli::try_parse_from(["x", "--rate-limit", "60000000"]).unwrap().serve.rate_limit, 60_000_000);
        assert!(Cli::try_parse_from(["x", "--rate-limit", "60000001"]).is_err());
        assert!(Cli::try_parse_from(["x", "--read-cache-secs", "3601"]).is_err());
        assert_eq!(Cli::try_parse_from(["x", "--read-cache-secs", "0"]).unwrap().serve.read_cache_secs, 0);
        // The body deadline: 30 s unless set, 1 to 600 at its edges, and nothing outside them.
        assert_eq!(c.serve.body_timeout_secs, 30);
        for (given, ok) in [("0", false), ("1", true), ("600", true), ("601", false)] {
            let parsed = Cli::try_parse_from(["x", "--body-timeout-secs", given]).map(|c| c.serve.body_timeout_secs);
            assert_eq!(parsed.ok(), ok.then(|| given.parse().unwrap()), "--body-timeout-secs {given}");
        }
        // HTTP workers: the cores unless set, 1 to 512 at its edges, and nothing outside them.
        assert_eq!(c.serve.http_workers, None, "one worker a core unless set");
        assert_eq!(c.serve.cpu_policy, crate::limits::CpuPolicy::Batch, "SCHED_BATCH unless set");
        for (given, ok) in [("batch", true), ("normal", true), ("Normal", false), ("fifo", false), ("", false)] {
            let flag = format!("--cpu-policy={given}");
            let parsed = Cli::try_parse_from(["x", flag.as_str()]).map(|c| c.serve.cpu_policy);
            match parsed {
                Ok(p) => assert!(ok && format!("{p:?}").eq_ignore_ascii_case(given), "{flag}: {p:?}"),
                Err(e) => assert!(!ok && e.to_string().contains("--cpu-policy"), "{flag}: {e}"),
            }
        }
        for (given, ok) in [("0", false), ("1", true), ("512", true), ("513", false), ("-1", false), ("two", false)] {
            let flag = format!("--http-workers={given}");
            let parsed = Cli::try_parse_from(["x", flag.as_str()]).map(|c| c.serve.http_workers);
            match parsed {
                Ok(n) => assert_eq!((n, ok), (Some(given.parse().unwrap()), true), "{flag}"),
                Err(e) => assert!(!ok && e.to_string().contains("--http-workers"), "{flag}: {e}"),
            }
        }
        assert_eq!(c.serve.public_url("0.0.0.0:9"), "http://0.0.0.0:9");
        assert!(c.serve.trusted_proxies.is_empty(), "no proxy is trusted unless configured");
        let c = Cli::try_parse_from(["x", "--trusted-proxies", "10.0.0.0/8, 192.0.2.7,fd00::/8"]).unwrap();
        let nets: Vec<String> = c.serve.trusted_proxies.iter().map(ToString::to_string).collect();
        assert_eq!(nets, ["10.0.0.0/8", "192.0.2.7/32", "fd00::/8"]);
        assert!(Cli::try_parse_from(["x", "--trusted-proxies", "10.0.0.0/33"]).is_err());
        assert!(Cli::try_parse_from(["x", "--trusted-proxies", "proxy.example"]).is_err());
        assert_eq!(c.serve.db.database_max_connections, None, "the pool's size per store unless set");
        let sized = Cli::try_parse_from(["x", "--database-max-connections", "4"]).unwrap();
        assert_eq!(crate::Setup::serving(&sized.serve, "http://x").max_connections, Some(4), "serve's pool");
        for refused in ["0", "1001", "-1", "many"] {
            let flag = format!("--database-max-connections={refused}");
            let e = Cli::try_parse_from(["x", flag.as_str()]).unwrap_err().to_string();
            assert!(e.contains("--database-max-connections"), "{refused}: {e}");
        }
        assert_eq!(c.serve.db.database_search_slots, None, "the machine's cores plus one unless set");
        for (given, ok) in [("0", false), ("1", true), ("1000", true), ("1001", false), ("few", false)] {
            let flag = format!("--database-search-slots={given}");
            let parsed = Cli::try_parse_from(["x", flag.as_str()]).map(|c| crate::Setup::serving(&c.serve, "http://x"));
            assert_eq!(parsed.ok().and_then(|s| s.search_slots), ok.then(|| given.parse().unwrap()), "{flag}");
        }
        let c = Cli::try_parse_from(["x", "--public-url", "https://launch.example/"]).unwrap();
        assert_eq!(c.serve.public_url("127.0.0.1:8080"), "https://launch.example");
    }
}
