//! What the use cases run on: one port per outside thing (storage, clock, randomness, the site reader,
//! the drafter, DNS, payments, VAT, mail) and the few settings they need. The use cases know only the
//! ports; which adapter stands behind each is chosen by whoever builds an [`App`] — `bootstrap` for
//! the binaries, a test or an embedding service for itself:
//!
//! `operations::App::new(Ports { store, clock, secrets, reader, drafter, dns, vat, … })`, each an
//! `Arc<dyn Port>`; see docs/ARCHITECTURE.md for what an embedding service needs.

use crate::keys::Keyring;
use chrono::{DateTime, Utc};
use domain::ports::{Clock, DnsResolver, Drafter, MailSender, PaymentGateway, Secrets, SiteReader, Store, VatRegistry};
use std::sync::Arc;

/// The ports an [`App`] is built from.
#[derive(Clone)]
pub struct Ports {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    /// Randomness and hashing (passwords, API-key hashes).
    pub secrets: Arc<dyn Secrets>,
    /// Reads makers' websites (robots.txt obeyed, public addresses only).
    pub reader: Arc<dyn SiteReader>,
    /// Drafts profiles from what the reader fetched.
    pub drafter: Arc<dyn Drafter>,
    /// Looks up TXT records for DNS claims.
    pub dns: Arc<dyn DnsResolver>,
    /// EU VAT rates and VAT number formats.
    pub vat: Arc<domain::vat::VatTable>,
    /// Where VAT numbers are checked (VIES); `None`: by format only, and VAT is charged.
    pub vat_registry: Option<Arc<dyn VatRegistry>>,
    /// The payment gateway checkout uses.
    pub payments: Arc<dyn PaymentGateway>,
    /// Delivers the outbox; `None`: emails stay queued for the operator.
    pub mailer: Option<Arc<dyn MailSender>>,
    /// This service's public base URL (no trailing slash), for links jobs write and badges they look for.
    pub public_url: String,
    /// `host:port` pairs exempted from the private-network block (intranet sites, test fixtures).
    pub allowed_hosts: Vec<String>,
    /// Produces the keyring on first use (loading or generating the root secret is the caller's
    /// business); an error is worded for the operator.
    pub keys: KeySource,
}

impl std::fmt::Debug for Ports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ports")
            .field("store", &self.store)
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

/// How the keyring is obtained, once, when first needed.
pub type KeySource = Arc<dyn Fn() -> Result<Keyring, String> + Send + Sync>;

/// Everything a use case needs, shared by reference (cloning is cheap: every part is behind an `Arc`).
/// The ports are read through it (`app.store`, `app.clock` …).
#[derive(Clone)]
pub struct App {
    ports: Ports,
    /// Wakes this instance's job worker when a job is queued here (others find it by polling).
    pub wake: Arc<tokio::sync::Notify>,
    keyring: Arc<tokio::sync::OnceCell<Arc<Keyring>>>,
    /// This instance's writer of page views, started on first use (`crate::engagement`).
    pub(crate) views: Arc<std::sync::OnceLock<crate::engagement::ViewWriter>>,
}

impl std::ops::Deref for App {
    type Target = Ports;
    fn deref(&self) -> &Ports {
        &self.ports
    }
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("store", &self.store)
            .field("reader", &self.reader)
            .field("drafter", &self.drafter.name())
            .field("public_url", &self.public_url)
            .field("mailer", &self.mailer.is_some())
            .finish_non_exhaustive()
    }
}

impl App {
    pub fn new(mut ports: Ports) -> Self {
        ports.public_url = ports.public_url.trim_end_matches('/').to_owned();
        Self {
            ports,
            wake: Arc::new(tokio::sync::Notify::new()),
            keyring: Arc::new(tokio::sync::OnceCell::new()),
            views: Arc::default(),
        }
    }

    /// The keys derived from the deployment's root secret, obtained on first use.
    pub async fn keys(&self) -> Result<Arc<Keyring>, String> {
        let ring = self.keyring.get_or_try_init(|| async { (self.ports.keys)().map(Arc::new) }).await?;
        Ok(ring.clone())
    }

    /// The keys if they were obtained already (a server obtains them before it serves).
    pub fn keys_loaded(&self) -> Option<Arc<Keyring>> {
        self.keyring.get().cloned()
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }
}
