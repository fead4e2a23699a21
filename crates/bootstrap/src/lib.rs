//! The composition root shared by `launchdir-api` and `launchdir-mcp`: configuration (flags with
//! environment twins), telemetry, and building the adapters the use cases run on.
//!
//! Architecture invariant: the only place that chooses adapters. API crates receive an [`App`] and
//! never construct a repository, client or clock themselves.

pub mod config;
pub mod keys;
pub mod limits;
pub mod telemetry;

use adapters_auth::OsSecrets;
use adapters_storage::{SeaOrmStore, db};
use anyhow::Context;
use domain::ports::{Clock, DnsResolver, Drafter, MailSender, RateLimiter, Secrets, SystemClock};
use std::sync::Arc;

pub use config::{DatabaseArgs, OutboundArgs, ServeArgs};

/// How the crawler names itself, with a link to the page that explains it.
pub fn user_agent(public_url: &str) -> String {
    format!("launchdir/{} (+{}/bot)", env!("CARGO_PKG_VERSION"), public_url.trim_end_matches('/'))
}

/// What a deployment is built from: the database, and what reaches outside. Everything is chosen here
/// once; nothing is patched in afterwards.
#[derive(Clone)]
pub struct Setup {
    pub database_url: String,
    /// The most connections the pool opens (`None`: the store's default, see [`db::connect_with`]).
    pub max_connections: Option<u32>,
    /// The most searches let into the database at once (`None`: the store's default, see
    /// [`SeaOrmStore::with_search_slots`]).
    pub search_slots: Option<u32>,
    /// How long the totals of paged reads are kept (the read-cache TTL; zero keeps them exact).
    pub count_ttl: std::time::Duration,
    pub outbound: OutboundArgs,
    /// The service's public base URL: links it writes, the crawler's user agent, what it never crawls.
    pub public_url: String,
    pub secrets: keys::SecretArgs,
    /// A clock other than the system's (`admin run-jobs --now`).
    pub clock: Option<Arc<dyn Clock>>,
}

impl std::fmt::Debug for Setup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Setup")
            .field("database_url", &redact(&self.database_url))
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

impl Setup {
    /// What `serve` builds from its flags, once the public URL is known (`check_serving` first).
    pub fn serving(args: &ServeArgs, public_url: &str) -> Self {
        Self {
            count_ttl: std::time::Duration::from_secs(args.read_cache_secs),
            outbound: args.outbound.clone(),
            public_url: public_url.to_owned(),
            secrets: args.secrets.clone(),
            ..Self::for_database(&args.db)
        }
    }

    /// [`Setup::new`] for the database the flags name, with the pool size they set.
    pub fn for_database(db: &crate::DatabaseArgs) -> Self {
        Self {
            max_connections: db.database_max_connections,
            search_slots: db.database_search_slots,
            ..Self::new(&db.database_url)
        }
    }

    /// The database at `database_url`, every total counted exactly, outbound settings at their
    /// defaults for a local public URL, and the root secret as the environment gives it.
    pub fn new(database_url: &str) -> Self {
        Self {
            database_url: database_url.to_owned(),
            max_connections: None,
            search_slots: None,
            count_ttl: std::time::Duration::ZERO,
            outbound: OutboundArgs::default(),
            public_url: "http://localhost".into(),
            secrets: keys::SecretArgs::from_env(),
            clock: None,
        }
    }
}

/// A deployment: the use cases' [`operations::App`] (which it dereferences to) built from [`Setup`],
/// and the database adapter itself for what only start-up and the operator's commands do with it.
#[derive(Debug, Clone)]
pub struct App {
    app: operations::App,
    sea: Arc<SeaOrmStore>,
}

impl std::ops::Deref for App {
    type Target = operations::App;
    fn deref(&self) -> &operations::App {
        &self.app
    }
}

impl App {
    /// Connects to the database with [`Setup::new`]'s defaults. Does not migrate: see [`App::start`].
    pub async fn connect(database_url: &str) -> anyhow::Result<Self> {
        Self::open(Setup::new(database_url)).await
    }

    /// Builds every adapter `setup` asks for — the store, the crawler (allowed hosts, a user agent
    /// naming the public URL), the drafter (an OpenAI-compatible server when configured, else
    /// extractive), payments, VIES, DNS and SMTP — and the use cases' [`operations::App`] on them.
    /// Without a usable system DNS configuration, DNS claims say so instead of the service refusing to
    /// start. Does not migrate.
    pub async fn open(setup: Setup) -> anyhow::Result<Self> {
        let Setup {
            database_url,
            max_connections,
            search_slots,
            count_ttl,
            outbound: args,
            public_url,
            secrets: secret_args,
            clock,
        } = setup;
        let conn = db::connect_with(&database_url, max_connections)
            .await
            .with_context(|| format!("cannot open the database at {}", redact(&database_url)))?;
        let mut store = SeaOrmStore::new(conn).with_count_cache(count_ttl).with_read_pipe(&database_url);
        if let Some(n) = search_slots {
            store = store.with_search_slots(n as usize, adapters_storage::SEARCH_SLOT_WAIT);
        }
        let sea = Arc::new(store);
        let fetcher =
            Self::fetcher(&user_agent(&public_url), &args.crawler_allowed_hosts)?.refusing_own(&[public_url.as_str()]);
        let allowed_hosts: Vec<String> =
            args.crawler_allowed_hosts.iter().map(|h| h.trim().to_owned()).filter(|h| !h.is_empty()).collect();
        let drafter: Arc<dyn Drafter> = match (&args.llm_base_url, &args.llm_model) {
            (Some(base), Some(model)) => Arc::new(
                adapters_drafter::LlmDrafter::new(base, model, args.llm_api_key.as_deref())
                    .map_err(|e| anyhow::anyhow!("configuring the drafting model (LAUNCHDIR_LLM_*): {e}"))?,
            ),
            (Some(_), None) => anyhow::bail!("LAUNCHDIR_LLM_BASE_URL is set without LAUNCHDIR_LLM_MODEL"),
            (None, _) => Arc::new(adapters_drafter::ExtractiveDrafter),
        };
        let chosen = match args.payments.as_deref() {
            Some(p) => p,
            None if is_loopback_url(&public_url) => "sandbox",
            None => "none",
        };
        let payments: Arc<dyn domain::ports::PaymentGateway> = match chosen {
            "sandbox" => Arc::new(adapters_payments::Sandbox),
            "none" => Arc::new(adapters_payments::NotConfigured),
            "stripe" => Arc::new(
                adapters_payments::Stripe::new(
                    &args.stripe_api_base,
                    args.stripe_secret_key.as_deref().unwrap_or_default(),
                    args.stripe_webhook_secret.as_deref().unwrap_or_default(),
                )
                .map_err(|e| anyhow::anyhow!("LAUNCHDIR_PAYMENTS=stripe: {e}"))?,
            ),
            other => anyhow::bail!("LAUNCHDIR_PAYMENTS must be sandbox or stripe, not {other:?}"),
        };
        let vat_registry: Option<Arc<dyn domain::ports::VatRegistry>> = match &args.vies_url {
            Some(url) => Some(Arc::new(
                adapters_payments::Vies::new(url)
                    .map_err(|e| anyhow::anyhow!("configuring VIES (LAUNCHDIR_VIES_URL): {e}"))?,
            )),
            None => None,
        };
        let dns: Arc<dyn DnsResolver> = match args.dns_server {
            Some(addr) => Arc::new(
                adapters_dns::HickoryDns::with_server(addr)
                    .map_err(|e| anyhow::anyhow!("configuring DNS (LAUNCHDIR_DNS_SERVER): {e}"))?,
            ),
            None => match adapters_dns::HickoryDns::system() {
                Ok(dns) => Arc::new(dns),
                Err(e) => {
                    tracing::warn!(error = %e, "no system DNS resolver; DNS claims will fail until LAUNCHDIR_DNS_SERVER is set");
                    Arc::new(adapters_dns::NoResolver(e))
                }
            },
        };
        let mailer: Option<Arc<dyn MailSender>> = match &args.smtp_url {
            Some(url) => Some(Arc::new(
                adapters_mail::SmtpSender::new(url, &args.mail_from)
                    .map_err(|e| anyhow::anyhow!("configuring SMTP (LAUNCHDIR_SMTP_URL): {e}"))?,
            )),
            None => None,
        };
        let secrets: Arc<dyn Secrets> = Arc::new(OsSecrets::default());
        let data_dir = keys::data_dir(&database_url);
        let random = secrets.clone();
        let load_keys: operations::KeySource =
            Arc::new(move || keys::load(&secret_args, &data_dir, &random.random_token()).map_err(|e| format!("{e:#}")));
        let app = operations::App::new(operations::Ports {
            store: sea.clone(),
            clock: clock.unwrap_or_else(|| Arc::new(SystemClock)),
            secrets,
            reader: Arc::new(adapters_fetch::SiteCrawler::new(fetcher)),
            drafter,
            dns,
            vat: Arc::new(demo_data::reference::vat_table().context("reading the VAT table")?),
            vat_registry,
            payments,
            mailer,
            public_url,
            allowed_hosts,
            keys: load_keys,
        });
        Ok(Self { app, sea })
    }

    fn fetcher(user_agent: &str, allowed: &[String]) -> anyhow::Result<adapters_fetch::SafeFetcher> {
        adapters_fetch::SafeFetcher::new(user_agent, allowed.iter().filter(|h| !h.trim().is_empty()).cloned())
            .context("building the HTTP client")
    }

    /// The use cases' view of this deployment (what a [`operations::Ctx`] holds).
    pub fn ports(&self) -> operations::App {
        self.app.clone()
    }

    /// The rate limiter `args` ask for: shared through Redis when `redis_url` is set (an unreachable Redis
    /// at start is an error, not a silent downgrade), else in this process. The Redis keys are scoped to
    /// this deployment by a name derived from its root secret, which every instance of it shares: two
    /// deployments on one Redis (staging and production) number their API keys alike, and `key:1` of one
    /// must not spend `key:1` of the other.
    pub async fn rate_limiter(&self, args: &ServeArgs) -> anyhow::Result<Arc<dyn RateLimiter>> {
        Ok(match &args.redis_url {
            Some(url) => {
                let keys = self.app.keys().await.map_err(anyhow::Error::msg)?;
                let key: String = keys.address.iter().map(|b| format!("{b:02x}")).collect();
                let deployment = self.app.secrets.hash_token(&format!("{key}\u{0}rate-limit-prefix"));
                let prefix = format!("launchdir:ratelimit:{}:", &deployment[..16]);
                Arc::new(
                    adapters_ratelimit::RedisLimiter::connect(url, &prefix)
                        .await
                        .with_context(|| format!("cannot reach Redis at {}", redact(url)))?,
                )
            }
            None => Arc::new(adapters_ratelimit::MemoryLimiter::default()),
        })
    }

    /// Applies pending migrations.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        db::migrate(self.sea.connection()).await.context("applying migrations")
    }

    /// Start-up as `serve` does it: migrate, seed missing reference data, and with `demo` load demo
    /// content into an empty directory.
    pub async fn start(&self, demo: bool) -> anyhow::Result<()> {
        self.migrate().await?;
        let seeded = demo_data::seed_reference(self.sea.as_ref()).await.context("seeding reference data")?;
        tracing::info!(
            categories = seeded.categories,
            products = seeded.products,
            questions = seeded.questions,
            settings = seeded.settings,
            "reference data seeded"
        );
        if demo {
            self.load_demo(demo_data::generate::DemoConfig::standard(self.clock.now()), true).await?;
        }
        Ok(())
    }

    /// Loads demo content unless the directory already holds listings.
    pub async fn load_demo(
        &self,
        cfg: demo_data::generate::DemoConfig,
        with_blog: bool,
    ) -> anyhow::Result<Option<demo_data::DemoReport>> {
        self.load_demo_as(cfg, with_blog, false).await
    }

    /// Generates demo content at scale (`admin generate-demo`) unless the directory already holds
    /// listings: one bulk load, the indexes built once at the end.
    pub async fn generate_demo(
        &self,
        cfg: demo_data::generate::DemoConfig,
    ) -> anyhow::Result<Option<demo_data::DemoReport>> {
        self.load_demo_as(cfg, true, true).await
    }

    async fn load_demo_as(
        &self,
        cfg: demo_data::generate::DemoConfig,
        with_blog: bool,
        bulk: bool,
    ) -> anyhow::Result<Option<demo_data::DemoReport>> {
        use domain::ports::DirectoryImport;
        if !self.sea.is_empty().await? {
            tracing::info!("demo data not loaded: the directory already has listings");
            return Ok(None);
        }
        let started = std::time::Instant::now();
        let store = self.sea.as_ref();
        let report = if bulk {
            demo_data::bulk_load_demo(store, cfg, with_blog).await
        } else {
            demo_data::load_demo(store, cfg, with_blog).await
        }
        .context("loading demo data")?;
        tracing::info!(
            listings = report.listings,
            founders = report.founders,
            votes = report.votes,
            awards = report.awards,
            blog_posts = report.blog_posts,
            ms = started.elapsed().as_millis() as u64,
            "demo data loaded"
        );
        Ok(Some(report))
    }

    /// Writes a consistent copy of the SQLite database to `path` while the service runs (`admin backup`);
    /// a PostgreSQL database is refused with the `pg_dump` command to use instead.
    pub async fn backup(&self, path: &std::path::Path) -> anyhow::Result<()> {
        db::backup(self.sea.connection(), path).await.map_err(anyhow::Error::new)
    }

    /// The store as its sea-orm adapter: for the operator's database commands and tests that look at rows.
    pub fn sea_orm(&self) -> &SeaOrmStore {
        &self.sea
    }

    /// True once the database answers and no migration is pending.
    pub async fn is_ready(&self) -> bool {
        db::ping(self.sea.connection()).await.is_ok()
            && matches!(db::pending_migrations(self.sea.connection()).await, Ok(0))
    }
}

/// Whether `url`'s host is a loopback address (`localhost`, `127.x.y.z`, `[::1]`): a deployment only
/// this machine reaches.
pub fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// What `serve` checks before it starts: a deployment others can reach must choose its payment
/// gateway on purpose (`LAUNCHDIR_PAYMENTS`), sandbox included.
pub fn check_serving(args: &OutboundArgs, public_url: &str) -> anyhow::Result<()> {
    if args.payments.is_none() && !is_loopback_url(public_url) {
        anyhow::bail!(
            "LAUNCHDIR_PAYMENTS is not set and the public URL {public_url} is not loopback: set \
             LAUNCHDIR_PAYMENTS=stripe (with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET), or \
             LAUNCHDIR_PAYMENTS=sandbox to take clearly marked test payments on purpose"
        );
    }
    Ok(())
}

/// A database URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls_and_the_payments_choice() {
        for u in ["http://127.0.0.1:8080", "http://localhost", "http://[::1]:9/x", "https://127.9.9.9/", "LOCALHOST:1"]
        {
            assert!(is_loopback_url(u), "{u}");
        }
        for u in
            ["https://launch.example", "http://10.0.0.1:8080", "http://0.0.0.0:8080", "http://localhost.evil.example"]
        {
            assert!(!is_loopback_url(u), "{u}");
        }
        let unset = OutboundArgs::default();
        assert!(check_serving(&unset, "http://127.0.0.1:8080").is_ok());
        let e = check_serving(&unset, "https://launch.example").unwrap_err().to_string();
        assert!(e.contains("LAUNCHDIR_PAYMENTS"), "{e}");
        let sandbox = OutboundArgs { payments: Some("sandbox".into()), ..OutboundArgs::default() };
        assert!(check_serving(&sandbox, "https://launch.example").is_ok(), "sandbox chosen on purpose");
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("sqlite://launchdir.db?mode=rwc"), "sqlite://launchdir.db?mode=rwc");
    }

    #[tokio::test]
    async fn the_pool_opens_as_many_connections_as_configured() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("a.db").display());
        let sized = App::open(Setup { max_connections: Some(3), ..Setup::new(&url) }).await.unwrap();
        assert_eq!(sized.sea_orm().pool_stats().max, 3);
        let default = App::connect(&url).await.unwrap();
        assert_eq!(default.sea_orm().pool_stats().max, 8, "SQLite's default");
    }

    #[tokio::test]
    async fn start_is_idempotent_on_a_fresh_sqlite_file() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("a.db").display());
        let app = App::connect(&url).await.unwrap();
        assert!(!app.is_ready().await, "not ready before migrations");
        app.start(false).await.unwrap();
        app.start(false).await.unwrap();
        assert!(app.is_ready().await);
        assert!(dir.path().join("a.db").exists(), "the SQLite file is created on first run");
    }
}
