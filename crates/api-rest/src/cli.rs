//! The commands of `launchdir-api` (CONTRACT.md, "Commands"). Printing to stdout is this module's job.
#![allow(clippy::print_stdout)]

use crate::server::Application;
use anyhow::{Context, bail};
use bootstrap::{App, DatabaseArgs, ServeArgs};
use clap::{Parser, Subcommand};
use domain::money::Cents;
use domain::ports::RepoError;
use domain::product::ProductCode;
use operations::moderation::{self, Actor};

#[derive(Debug, Parser)]
#[command(
    name = "launchdir-api",
    version,
    about = "The launchdir directory service: REST API, web pages and MCP on one port."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Migrate, seed reference data (and with --demo-data the demo content), then serve until SIGTERM/SIGINT.
    Serve(ServeArgs),
    /// Apply pending migrations and exit.
    Migrate(DatabaseArgs),
    /// Operator commands.
    #[command(subcommand)]
    Admin(Admin),
}

#[derive(Debug, Subcommand)]
pub enum Admin {
    /// Load generated demo content into an empty database (for benchmarks: --listings 100000).
    GenerateDemo {
        /// How many listings to generate (about 78 % of them live).
        #[arg(long, default_value_t = 420)]
        listings: usize,
        /// Seed of the generator: the same seed gives the same content.
        #[arg(long, default_value_t = 20_261_122)]
        seed: u64,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Create an account (email + password; --admin for an operator).
    CreateUser {
        #[arg(long)]
        email: String,
        /// The password on the command line, where other users of the machine can see it (`ps`);
        /// prefer --password-stdin.
        #[arg(long, required_unless_present = "password_stdin", conflicts_with = "password_stdin")]
        password: Option<String>,
        /// Read the password from standard input (its first line).
        #[arg(long)]
        password_stdin: bool,
        #[arg(long)]
        admin: bool,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Create an API key for an account; prints the key alone on the last line (it is stored only as a hash).
    CreateApiKey {
        #[arg(long)]
        email: String,
        /// Comma list of account:read, listings:write, orders:write.
        #[arg(long)]
        scopes: String,
        #[arg(long, default_value = "admin")]
        name: String,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Set a product's price in USD cents, VAT excluded.
    SetPrice {
        #[arg(long)]
        product: String,
        #[arg(long)]
        cents: i64,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Run the calendar (go-live of weeks that began, Launch of the Week of weeks that ended) and every
    /// background job that is due (crawls and drafts, badge checks, emails …) once, as if the clock
    /// read --now, and exit.
    RunJobs {
        /// The instant to run as (RFC 3339); default now.
        #[arg(long)]
        now: Option<String>,
        /// Base of the links jobs write (as `serve --public-url`).
        #[arg(long, env = "LAUNCHDIR_PUBLIC_URL", default_value = "http://127.0.0.1:8080")]
        public_url: String,
        #[command(flatten)]
        outbound: bootstrap::OutboundArgs,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Write a consistent copy of the SQLite database to PATH while the service runs (VACUUM INTO).
    /// Keep the root secret (launchdir.secret or LAUNCHDIR_SECRET_KEY) with it. PostgreSQL: use pg_dump.
    Backup {
        /// The file to write; it must not exist.
        path: std::path::PathBuf,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Print queued and sent emails, newest first (to read an invite or claim link without a mail server).
    Outbox {
        /// Only emails to this address.
        #[arg(long)]
        to: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u64,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Print a listing's edit history: every update_my_listing with who edited, when, and the
    /// fields that changed with their before and after values (the site team's review copy).
    ListingHistory {
        /// The listing's id.
        listing_id: i64,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Print every claim on a listing: who claimed it by which method, its status, and who verified
    /// what, when.
    ListingClaims {
        /// The listing's id.
        listing_id: i64,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Take a listing off every public read at once (search, categories, boards, its page, sitemaps,
    /// feeds, MCP), with a reason its owners see and are emailed. Restore it with restore-listing.
    HideListing {
        slug: String,
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        links: LinkArgs,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Bring a hidden listing back exactly as it was.
    RestoreListing {
        slug: String,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Suspend an account: its sessions, API keys and OAuth grants stop working at once, it cannot sign
    /// in (told why), its listings are hidden and its votes stop counting. Undo with restore-user.
    SuspendUser {
        email: String,
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        links: LinkArgs,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Undo a suspension: the account works again, its listings hidden by the suspension come back,
    /// its votes count again.
    RestoreUser {
        email: String,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Print people's reports on listings, newest first, with the count per listing of open ones.
    Reports {
        /// Only reports the site team has not closed (by hiding the listing or dismissing them).
        #[arg(long)]
        open: bool,
        #[arg(long, default_value_t = 200)]
        limit: u64,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Put a domain on the blocklist: it and its subdomains cannot be submitted or claimed.
    BlockDomain {
        domain: String,
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Take a domain off the blocklist.
    UnblockDomain {
        domain: String,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Print the moderation audit log (who did what, when and why), newest first.
    Audit {
        #[arg(long, default_value_t = 200)]
        limit: u64,
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Set a site setting, e.g. `free_plan_min_weeks 6` or `seller_country IE`.
    SetSetting {
        key: String,
        value: String,
        #[command(flatten)]
        db: DatabaseArgs,
    },
}

/// The base of the links an admin command writes into emails.
#[derive(Debug, Clone, clap::Args)]
pub struct LinkArgs {
    /// Base of the links in the emails it sends (as `serve --public-url`).
    #[arg(long, env = "LAUNCHDIR_PUBLIC_URL", default_value = "http://127.0.0.1:8080")]
    public_url: String,
}

/// Opens the database with schema and reference data in place, with `links` for the emails it writes.
async fn ready_app_linking(db: &DatabaseArgs, links: &LinkArgs) -> anyhow::Result<App> {
    let app =
        App::open(bootstrap::Setup { public_url: links.public_url.clone(), ..bootstrap::Setup::new(&db.database_url) })
            .await?;
    app.start(false).await?;
    Ok(app)
}

/// An operation's refusal as the command line says it.
fn said(e: operations::OpError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// Opens the database with schema and reference data in place, as every admin command needs.
async fn ready_app(db: &DatabaseArgs) -> anyhow::Result<App> {
    let app = App::open(bootstrap::Setup::for_database(db)).await?;
    app.start(false).await?;
    Ok(app)
}

/// Tells running instances that public data changed, so their read caches drop it within a second.
async fn changed(app: &App) {
    operations::public_data_changed(app, &operations::ReadCache::disabled()).await;
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => {
            let listener =
                bootstrap::limits::listen(&args.bind).with_context(|| format!("cannot listen on {}", args.bind))?;
            let app = Application::build(&args, listener).await?;
            tracing::info!(bind = %args.bind, public_url = %args.public_url(&args.bind), database = %bootstrap::redact(&args.db.database_url), "serving");
            app.run_until_stopped().await
        }
        Command::Migrate(db) => {
            let app = App::open(bootstrap::Setup::for_database(&db)).await?;
            app.migrate().await?;
            println!("migrations applied");
            Ok(())
        }
        Command::Admin(Admin::GenerateDemo { listings, seed, db }) => {
            let app = ready_app(&db).await?;
            let cfg = demo_data::generate::DemoConfig { listings, seed, now: app.now() };
            match app.generate_demo(cfg).await? {
                Some(r) => {
                    changed(&app).await;
                    println!(
                        "loaded {} listings, {} founders, {} votes, {} awards, {} blog posts",
                        r.listings, r.founders, r.votes, r.awards, r.blog_posts
                    );
                    Ok(())
                }
                None => bail!("the directory already has listings; generate demo content into an empty database"),
            }
        }
        Command::Admin(Admin::CreateUser { email, password, password_stdin, admin, db }) => {
            let password = match (password, password_stdin) {
                (_, true) => {
                    let mut line = String::new();
                    std::io::stdin().read_line(&mut line).context("reading the password from standard input")?;
                    line.trim_end_matches(['\r', '\n']).to_owned()
                }
                (Some(p), false) => {
                    eprintln!(
                        "warning: a password given with --password is visible to other users of this machine \
                         (process list, shell history); prefer --password-stdin"
                    );
                    p
                }
                (None, false) => bail!("give the password with --password-stdin (or --password)"),
            };
            let app = ready_app(&db).await?;
            match operations::accounts::create_user(&app, &email, &password, "", admin).await {
                Ok(u) => {
                    println!("created {}account {} (id {})", if admin { "admin " } else { "" }, u.email, u.id);
                    Ok(())
                }
                Err(operations::OpError::Repo(RepoError::Conflict(_))) => bail!("an account with email {email} exists"),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            }
        }
        Command::Admin(Admin::CreateApiKey { email, scopes, name, db }) => {
            let scopes = domain::user::Scope::parse_list(&scopes)?;
            let parsed = domain::user::Email::parse(&email)?;
            let app = ready_app(&db).await?;
            let Some(user) =
                operations::admin::user_by_email(&app, &parsed).await.map_err(|e| anyhow::anyhow!("{e}"))?
            else {
                bail!("no account with email {email}; create it with `admin create-user`")
            };
            let (key, token) = operations::accounts::create_api_key(&app, user.id, &name, &scopes)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let scopes: Vec<&str> = key.scopes.iter().map(|s| s.as_str()).collect();
            println!(
                "API key {:?} for {} with scopes {} (shown once; stored only as a hash):",
                key.name,
                user.email,
                scopes.join(",")
            );
            println!("{}", token.as_str());
            Ok(())
        }
        Command::Admin(Admin::SetPrice { product, cents, db }) => {
            let code = ProductCode::parse(&product)?;
            if cents < 0 {
                bail!("--cents must be zero or more");
            }
            let app = ready_app(&db).await?;
            match operations::admin::set_price(&app, &code, Cents::new(cents))
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?
            {
                Ok(()) => {
                    println!("{product} now costs {} (VAT excluded)", Cents::new(cents));
                    Ok(())
                }
                Err(known) => bail!("unknown product {product:?}; known: {}", known.join(", ")),
            }
        }
        Command::Admin(Admin::RunJobs { now, public_url, outbound, db }) => {
            let clock: Option<std::sync::Arc<dyn domain::ports::Clock>> = match now {
                Some(now) => {
                    let at = chrono::DateTime::parse_from_rfc3339(&now)
                        .with_context(|| format!("--now {now:?} is not an RFC 3339 instant"))?;
                    Some(std::sync::Arc::new(domain::ports::FixedClock::new(at.with_timezone(&chrono::Utc))))
                }
                None => None,
            };
            let app =
                App::open(bootstrap::Setup { outbound, public_url, clock, ..bootstrap::Setup::new(&db.database_url) })
                    .await?;
            app.start(false).await?;
            // The calendar first (a week that began goes live), then the jobs due at that instant.
            let moved = operations::lifecycle::duties(&app).await?;
            let ran = operations::worker::run_due(&app, &operations::worker::worker_name()).await?;
            if ran > 0 {
                changed(&app).await;
            }
            println!("calendar: {moved} change(s)");
            println!("ran {ran} job(s)");
            Ok(())
        }
        Command::Admin(Admin::Backup { path, db }) => {
            let app = ready_app(&db).await?;
            app.backup(&path).await?;
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            println!("backed up to {} ({bytes} bytes)", path.display());
            println!("keep the root secret with it (launchdir.secret beside the database, or LAUNCHDIR_SECRET_KEY)");
            Ok(())
        }
        Command::Admin(Admin::Outbox { to, limit, db }) => {
            let app = ready_app(&db).await?;
            let mails =
                operations::admin::outbox(&app, to.as_deref(), limit).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            if mails.is_empty() {
                println!("the outbox is empty");
            }
            for m in mails {
                let state = match (&m.sent_at, &m.last_error) {
                    (Some(at), _) => format!("sent {}", at.to_rfc3339()),
                    (None, Some(e)) => format!("queued, {} failed attempt(s): {e}", m.attempts),
                    (None, None) => "queued".to_owned(),
                };
                println!("--- #{} to {} · {} · created {}", m.id, m.to, state, m.created_at.to_rfc3339());
                println!("Subject: {}\n\n{}", m.subject, m.body.trim_end());
            }
            Ok(())
        }
        Command::Admin(Admin::ListingHistory { listing_id, db }) => {
            let id = domain::ids::ListingId::parse(listing_id)?;
            let app = ready_app(&db).await?;
            let versions = operations::admin::listing_history(&app, id).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            if versions.is_empty() {
                println!("listing {listing_id} has no edits");
            }
            for v in versions {
                let user = v.user_id.map_or_else(|| "a deleted account".to_owned(), |u| format!("user {u}"));
                println!("--- version {} · {} · by {user}", v.id, v.created_at.to_rfc3339());
                for (field, old, new) in operations::admin::changed_fields(&v.before, &v.after) {
                    println!("{field}:\n  before: {old}\n  after:  {new}");
                }
            }
            Ok(())
        }
        Command::Admin(Admin::ListingClaims { listing_id, db }) => {
            let id = domain::ids::ListingId::parse(listing_id)?;
            let app = ready_app(&db).await?;
            let claims = operations::admin::listing_claims(&app, id).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            if claims.is_empty() {
                println!("listing {listing_id} has no claims");
            }
            let now = app.now();
            for (c, who) in claims {
                let by = c.email.as_deref().map(|e| format!(" to {e}")).unwrap_or_default();
                println!(
                    "claim {} · {} · {}{by} · {} · made {}",
                    c.id,
                    who,
                    c.method.as_str(),
                    c.status_at(now).as_str(),
                    c.created_at.to_rfc3339()
                );
                if let Some(at) = c.verified_at {
                    println!("  verified {}", at.to_rfc3339());
                }
                if let Some(k) = c.last_check {
                    println!("  last check {}: looked for {}; found {}", k.at.to_rfc3339(), k.looked_for, k.found);
                }
            }
            Ok(())
        }
        Command::Admin(Admin::HideListing { slug, reason, links, db }) => {
            let app = ready_app_linking(&db, &links).await?;
            let l = moderation::hide_listing(&app, &operations::ReadCache::disabled(), &Actor::Cli, &slug, &reason)
                .await
                .map_err(said)?;
            println!("hid {} ({}); its owners are emailed", l.slug, l.profile.name);
            Ok(())
        }
        Command::Admin(Admin::RestoreListing { slug, db }) => {
            let app = ready_app(&db).await?;
            let l = moderation::restore_listing(&app, &operations::ReadCache::disabled(), &Actor::Cli, &slug)
                .await
                .map_err(said)?;
            println!("restored {} ({}): {}", l.slug, l.profile.name, l.lifecycle.status().as_str());
            Ok(())
        }
        Command::Admin(Admin::SuspendUser { email, reason, links, db }) => {
            let app = ready_app_linking(&db, &links).await?;
            let (u, e) =
                moderation::suspend_user(&app, &operations::ReadCache::disabled(), &Actor::Cli, &email, &reason)
                    .await
                    .map_err(said)?;
            println!("suspended {}: {} listing(s) hidden, {} vote(s) no longer counted", u.email, e.listings, e.votes);
            Ok(())
        }
        Command::Admin(Admin::RestoreUser { email, db }) => {
            let app = ready_app(&db).await?;
            let (u, e) = moderation::restore_user(&app, &operations::ReadCache::disabled(), &Actor::Cli, &email)
                .await
                .map_err(said)?;
            println!("restored {}: {} listing(s) back, {} vote(s) counted again", u.email, e.listings, e.votes);
            Ok(())
        }
        Command::Admin(Admin::Reports { open, limit, db }) => {
            let app = ready_app(&db).await?;
            let reports = moderation::reports(&app, open, limit).await.map_err(said)?;
            if reports.is_empty() {
                println!("{}", if open { "no open reports" } else { "no reports" });
            }
            for q in moderation::queue(&reports) {
                let reasons: Vec<&str> = q.reasons.iter().map(|r| r.as_str()).collect();
                println!("{} · {} open report(s) · {} · {}", q.slug, q.count, reasons.join(", "), q.name);
            }
            for r in &reports {
                let state = r.closed_at.map_or_else(|| "open".to_owned(), |at| format!("closed {}", at.to_rfc3339()));
                let who = r.reporter.as_deref().unwrap_or("a deleted account");
                println!(
                    "--- report {} · {} · {} · by {who} · {} · {state}",
                    r.id,
                    r.listing_slug,
                    r.reason.as_str(),
                    r.at.to_rfc3339()
                );
                if !r.note.is_empty() {
                    println!("{}", r.note);
                }
            }
            Ok(())
        }
        Command::Admin(Admin::BlockDomain { domain, reason, db }) => {
            let app = ready_app(&db).await?;
            let b = moderation::block_domain(&app, &Actor::Cli, &domain, &reason).await.map_err(said)?;
            println!("blocked {} and its subdomains", b.domain.as_str());
            Ok(())
        }
        Command::Admin(Admin::UnblockDomain { domain, db }) => {
            let app = ready_app(&db).await?;
            moderation::unblock_domain(&app, &Actor::Cli, &domain).await.map_err(said)?;
            println!("unblocked {}", domain.trim());
            Ok(())
        }
        Command::Admin(Admin::Audit { limit, db }) => {
            let app = ready_app(&db).await?;
            let lines = moderation::audit_log(&app, limit).await.map_err(said)?;
            if lines.is_empty() {
                println!("the audit log is empty");
            }
            for l in lines {
                let e = l.entry;
                let why = if e.reason.is_empty() { String::new() } else { format!(" · why: {}", e.reason) };
                println!("{} · {} · {} {}{why}", e.at.to_rfc3339(), e.actor, e.action.as_str(), e.target);
            }
            Ok(())
        }
        Command::Admin(Admin::SetSetting { key, value, db }) => {
            domain::settings::validate(&key, &value)?;
            let app = ready_app(&db).await?;
            operations::admin::set_setting(&app, &key, &value).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("{key} = {value}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body deadline of a server built without `Limits` (api-http's fallback) is the one `serve`
    /// starts with unless told otherwise; api-http cannot read the setting's default itself.
    #[test]
    fn the_body_deadline_falls_back_to_serves_default() {
        let Command::Serve(args) = Cli::try_parse_from(["launchdir-api", "serve"]).unwrap().command else {
            panic!("serve")
        };
        assert_eq!(std::time::Duration::from_secs(args.body_timeout_secs), api_http::middleware::DEFAULT_BODY_DEADLINE);
    }
}
