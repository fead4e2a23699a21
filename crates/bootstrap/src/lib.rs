//! The composition root shared by `launchdir-api` and `launchdir-mcp`: configuration (flags with
//! environment twins), telemetry, and building the adapters the use cases run on.
//!
//! Architecture invariant: the only place that chooses adapters. API crates receive an [`App`] and
//! never construct a repository, client or clock themselves.

pub mod config;
pub mod keys;
pub mod telemetry;

use adapters_auth::OsSecrets;
use adapters_storage::{SeaOrmStore, db};
use anyhow::Context;
use chrono::{DateTime, Utc};
use domain::ports::{Clock, DnsResolver, Drafter, MailSender, RateLimiter, Secrets, SiteReader, SystemClock};
use std::sync::Arc;

pub use config::{DatabaseArgs, OutboundArgs, ServeArgs};

/// How the crawler names itself, with a link to the page that explains it.
pub fn user_agent(public_url: &str) -> String {
    format!("launchdir/{} (+{}/bot)", env!("CARGO_PKG_VERSION"), public_url.trim_end_matches('/'))
}

/// Everything a running service needs, built once from configuration and shared by reference.
#[derive(Debug, Clone)]
pub struct App {
    /// Storage, every role behind one port: use cases never name the adapter.
    pub store: Arc<dyn domain::ports::Store>,
    /// The same store as its adapter, for what only start-up and the operator's commands do with the
    /// database itself (migrations, readiness, seeding).
    sea: Arc<SeaOrmStore>,
    pub clock: Arc<dyn Clock>,
    /// Randomness and hashing (argon2id passwords, API-key hashes).
    pub secrets: Arc<dyn Secrets>,
    /// Reads makers' websites (robots.txt obeyed, public addresses only).
    pub reader: Arc<dyn SiteReader>,
    /// Drafts profiles from what the reader fetched.
    pub drafter: Arc<dyn Drafter>,
    /// Looks up TXT records for DNS claims (`LAUNCHDIR_DNS_SERVER` or the system's resolvers).
    pub dns: Arc<dyn DnsResolver>,
    /// EU VAT rates and VAT number formats (`fixtures/reference/eu_vat.json`).
    pub vat: Arc<domain::vat::VatTable>,
    /// Where VAT numbers are checked (VIES) when `LAUNCHDIR_VIES_URL` is set; else by format only.
    pub vat_registry: Option<Arc<dyn domain::ports::VatRegistry>>,
    /// The payment gateway checkout uses (`LAUNCHDIR_PAYMENTS`: sandbox or stripe).
    pub payments: Arc<dyn domain::ports::PaymentGateway>,
    /// Delivers the outbox; `None`: emails stay queued for `admin outbox`.
    pub mailer: Option<Arc<dyn MailSender>>,
    /// Wakes this instance's job worker when a job is queued here (others find it by polling).
    pub wake: Arc<tokio::sync::Notify>,
    /// This service's public base URL (no trailing slash), for links jobs write and badges they look
    /// for; set by [`App::configure_outbound`].
    pub public_url: String,
    /// The keys derived from the deployment's root secret ([`keys`]), loaded on first use.
    keyring: Arc<tokio::sync::OnceCell<Arc<keys::Keyring>>>,
    /// Where the root secret comes from (`LAUNCHDIR_SECRET_KEY*`), and the data directory a generated
    /// one is kept in.
    secret_args: keys::SecretArgs,
    data_dir: std::path::PathBuf,
    /// `host:port` the operator exempted from the private-network block
    /// (`LAUNCHDIR_CRAWLER_ALLOWED_HOSTS`); only these may be read over plain http where https is
    /// otherwise required (client ID metadata documents).
    pub allowed_hosts: Vec<String>,
}

impl App {
    /// Connects to the database, every total counted exactly. Does not migrate: see [`App::start`].
    pub async fn connect(database_url: &str) -> anyhow::Result<Self> {
        Self::connect_with(database_url, std::time::Duration::ZERO).await
    }

    /// Connects as a server does: the totals of paged reads are kept for `count_ttl` (the read-cache
    /// TTL; zero keeps them exact).
    pub async fn connect_with(database_url: &str, count_ttl: std::time::Duration) -> anyhow::Result<Self> {
        let conn = db::connect(database_url)
            .await
            .with_context(|| format!("cannot open the database at {}", redact(database_url)))?;
        let sea = Arc::new(SeaOrmStore::new(conn).with_count_cache(count_ttl));
        let mut app = Self {
            store: sea.clone(),
            sea,
            clock: Arc::new(SystemClock),
            secrets: Arc::new(OsSecrets::default()),
            reader: Arc::new(adapters_fetch::SiteCrawler::new(Self::fetcher(&user_agent("http://localhost"), &[])?)),
            drafter: Arc::new(adapters_drafter::ExtractiveDrafter),
            dns: Arc::new(adapters_dns::NoResolver("not set up yet".into())),
            vat: Arc::new(demo_data::reference::vat_table().context("reading the VAT table")?),
            payments: Arc::new(adapters_payments::Sandbox),
            vat_registry: None,
            mailer: None,
            wake: Arc::new(tokio::sync::Notify::new()),
            public_url: String::new(),
            keyring: Arc::new(tokio::sync::OnceCell::new()),
            secret_args: keys::SecretArgs::from_env(),
            data_dir: keys::data_dir(database_url),
            allowed_hosts: Vec::new(),
        };
        app.configure_outbound(&OutboundArgs::default(), "http://localhost")?;
        Ok(app)
    }

    fn fetcher(user_agent: &str, allowed: &[String]) -> anyhow::Result<adapters_fetch::SafeFetcher> {
        adapters_fetch::SafeFetcher::new(user_agent, allowed.iter().filter(|h| !h.trim().is_empty()).cloned())
            .context("building the HTTP client")
    }

    /// Sets up what reaches outside — the crawler (allowed hosts, user agent naming `public_url`), the
    /// drafter (an OpenAI-compatible server when configured, else extractive), DNS lookups and SMTP
    /// delivery. Without a usable system DNS configuration, DNS claims say so instead of the service
    /// refusing to start.
    pub fn configure_outbound(&mut self, args: &OutboundArgs, public_url: &str) -> anyhow::Result<()> {
        self.public_url = public_url.trim_end_matches('/').to_owned();
        let fetcher = Self::fetcher(&user_agent(public_url), &args.crawler_allowed_hosts)?.refusing_own(&[public_url]);
        self.allowed_hosts =
            args.crawler_allowed_hosts.iter().map(|h| h.trim().to_owned()).filter(|h| !h.is_empty()).collect();
        self.reader = Arc::new(adapters_fetch::SiteCrawler::new(fetcher.clone()));
        self.drafter = match (&args.llm_base_url, &args.llm_model) {
            (Some(base), Some(model)) => Arc::new(
                adapters_drafter::LlmDrafter::new(base, model, args.llm_api_key.as_deref())
                    .map_err(|e| anyhow::anyhow!("configuring the drafting model (LAUNCHDIR_LLM_*): {e}"))?,
            ),
            (Some(_), None) => anyhow::bail!("LAUNCHDIR_LLM_BASE_URL is set without LAUNCHDIR_LLM_MODEL"),
            (None, _) => Arc::new(adapters_drafter::ExtractiveDrafter),
        };
        let chosen = match args.payments.as_deref() {
            Some(p) => p,
            None if is_loopback_url(public_url) => "sandbox",
            None => "none",
        };
        self.payments = match chosen {
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
        self.vat_registry = match &args.vies_url {
            Some(url) => Some(Arc::new(
                adapters_payments::Vies::new(url)
                    .map_err(|e| anyhow::anyhow!("configuring VIES (LAUNCHDIR_VIES_URL): {e}"))?,
            )),
            None => None,
        };
        self.dns = match args.dns_server {
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
        self.mailer = match &args.smtp_url {
            Some(url) => Some(Arc::new(
                adapters_mail::SmtpSender::new(url, &args.mail_from)
                    .map_err(|e| anyhow::anyhow!("configuring SMTP (LAUNCHDIR_SMTP_URL): {e}"))?,
            )),
            None => None,
        };
        Ok(())
    }

    /// The rate limiter `args` ask for: shared through Redis when `redis_url` is set (an unreachable Redis
    /// at start is an error, not a silent downgrade), else in this process.
    pub async fn rate_limiter(args: &ServeArgs) -> anyhow::Result<Arc<dyn RateLimiter>> {
        Ok(match &args.redis_url {
            Some(url) => Arc::new(
                adapters_ratelimit::RedisLimiter::connect(url, "launchdir:ratelimit:")
                    .await
                    .with_context(|| format!("cannot reach Redis at {}", redact(url)))?,
            ),
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
        use domain::ports::DirectoryImport;
        if !self.sea.is_empty().await? {
            tracing::info!("demo data not loaded: the directory already has listings");
            return Ok(None);
        }
        let started = std::time::Instant::now();
        let report = demo_data::load_demo(self.sea.as_ref(), cfg, with_blog).await.context("loading demo data")?;
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

    /// Takes the root secret from `args` (flags of `serve`) instead of the environment.
    pub fn use_secrets(&mut self, args: &keys::SecretArgs) {
        self.secret_args = args.clone();
        self.keyring = Arc::new(tokio::sync::OnceCell::new());
    }

    /// The keys derived from the root secret, loaded (or generated, see [`keys`]) on first use.
    pub async fn keys(&self) -> anyhow::Result<Arc<keys::Keyring>> {
        let ring = self
            .keyring
            .get_or_try_init(|| async {
                keys::load(&self.secret_args, &self.data_dir, &self.secrets.random_token()).map(Arc::new)
            })
            .await?;
        Ok(ring.clone())
    }

    /// The keys if they were loaded already (`serve` loads them before serving).
    pub fn keys_loaded(&self) -> Option<Arc<keys::Keyring>> {
        self.keyring.get().cloned()
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

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
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
