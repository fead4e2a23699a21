//! Ports for submitting by URL: drafts and their invites, the site reader, the drafter, and email.

use super::RepoResult;
use crate::draft::{Draft, DraftField, Drafted};
use crate::ids::{DraftId, ListingId, UserId};
use crate::listing::NewListing;
use crate::paging::{PageRequest, Paged};
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// A co-founder invite: stored by the hash of its token; the token itself is only in the email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invite {
    pub id: i64,
    pub draft: DraftId,
    pub email: String,
    pub created_at: DateTime<Utc>,
    pub accepted_by: Option<UserId>,
}

#[async_trait]
pub trait DraftRepository: Send + Sync {
    async fn create_draft(&self, draft: &Draft) -> RepoResult<()>;

    /// Creates the draft unless its owner already has `max_in_progress` drafts still being read or
    /// drafted (status crawling or drafting); whether it did. Counted and created under a lock on the
    /// owner, so submissions sent at once are counted one after another, not all on the same count.
    async fn create_draft_within(&self, draft: &Draft, max_in_progress: u64) -> RepoResult<bool>;

    /// Any owner's; callers answer 404 for other people's drafts.
    async fn get_draft(&self, id: DraftId) -> RepoResult<Option<Draft>>;

    /// The owner's drafts, newest first.
    async fn list_drafts(&self, owner: UserId, page: PageRequest) -> RepoResult<Paged<Draft>>;

    /// Saves the draft if nobody saved it since it was read (`draft.version` is the version read);
    /// returns the saved draft with its new version, or `None` when the caller must re-read and retry.
    async fn save_draft(&self, draft: &Draft, now: DateTime<Utc>) -> RepoResult<Option<Draft>>;

    /// Creates the draft's listing (a free slug near `listing.slug`, the owner and accepted co-founders
    /// as members) or, when the draft has one, updates its profile and categories — status, plan and
    /// counters untouched. One transaction; the draft records the listing.
    async fn save_draft_listing(
        &self,
        draft: &Draft,
        listing: &NewListing,
        now: DateTime<Utc>,
    ) -> RepoResult<ListingId>;

    /// `Conflict` when the draft already has [`crate::draft::limits::INVITES_PER_LISTING`] invites. An
    /// address invited before gets the new token (a fresh link) without using another invite.
    async fn create_invite(
        &self,
        draft: DraftId,
        email: &str,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> RepoResult<Invite>;

    async fn invite_by_token(&self, token_hash: &str) -> RepoResult<Option<Invite>>;

    /// Accepts the invite for `user`: records it and, when the draft has a listing, adds the user as a
    /// co-founder member. Accepting twice is not an error.
    async fn accept_invite(&self, id: i64, user: UserId, now: DateTime<Utc>) -> RepoResult<()>;
}

/// A page the site reader fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedPage {
    /// Where it was read (after redirects).
    pub url: String,
    pub html: String,
    /// The visible text, then the text of attributes a person or crawler reads (meta and OpenGraph
    /// content, structured data, link addresses, image alt text): what evidence is checked against.
    pub text: String,
}

/// What the site reader brings back: the homepage first, then the most useful same-site pages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Site {
    pub pages: Vec<FetchedPage>,
}

impl Site {
    pub fn text(&self) -> crate::draft::SiteText {
        crate::draft::SiteText::new(self.pages.iter().map(|p| (p.url.clone(), p.text.clone())))
    }
}

/// Why a site could not be read, in words for a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SiteError {
    #[error("we could not reach the website: {0}")]
    Unreachable(String),
    #[error("the website's robots.txt does not allow us to read this page")]
    RobotsForbid,
    /// RFC 9309: a robots.txt that answers with a server error means nothing may be read.
    #[error("the website's robots.txt answered with HTTP status {0}, so we may not read the site; try again later")]
    RobotsUnavailable(u16),
    #[error("the address is not a web page (it is {0}); give the address of the site's homepage")]
    NotHtml(String),
    #[error("the page is larger than the 1 MiB we read")]
    TooLarge,
    #[error("the website answered with HTTP status {0}")]
    Status(u16),
    #[error("the address points into a private network, which we never read")]
    Refused,
    #[error("the website redirected too many times")]
    TooManyRedirects,
    #[error("the homepage redirected to another site ({0}); give the address the homepage really has")]
    OffSite(String),
}

/// A homepage as the badge check and meta-tag claims read it: where it ended up (after same-site
/// redirects), the visible links and images on it as absolute URLs, and the `<meta name content>`
/// pairs of its `<head>` (names lower-cased).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Homepage {
    pub url: String,
    pub hrefs: Vec<String>,
    pub images: Vec<String>,
    pub meta: Vec<(String, String)>,
}

#[async_trait]
pub trait SiteReader: Send + Sync + std::fmt::Debug {
    /// Reads the homepage at `url` and a handful of useful same-site pages, obeying robots.txt.
    async fn read_site(&self, url: &str) -> Result<Site, SiteError>;

    /// Reads only the homepage at `url`, obeying robots.txt and following redirects within the same
    /// site (a redirect elsewhere is [`SiteError::OffSite`]).
    async fn read_homepage(&self, url: &str) -> Result<Homepage, SiteError>;

    /// Reads the small text file at `url` (a claim's verification file), following redirects within
    /// the same site. robots.txt is not asked: the site's owner put the file there for us to read.
    async fn read_file(&self, url: &str) -> Result<String, SiteError>;

    /// The bytes at `url` (a listing's logo), following redirects to any public address (logos live on
    /// CDNs), capped like every fetch. What they are is the caller's check (`crate::image`).
    async fn read_image(&self, url: &str) -> Result<Vec<u8>, SiteError>;
}

/// Why a drafter produced nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrafterError {
    /// The drafting service failed or answered with something unusable (the message is for logs).
    #[error("the drafting service failed: {0}")]
    Failed(String),
}

#[async_trait]
pub trait Drafter: Send + Sync + std::fmt::Debug {
    /// A short name for logs and the draft record (`extractive`, `llm:<model>`).
    fn name(&self) -> String;

    /// Proposes values for `wanted` (and FAQs, founders and socials when drafting everything) from the
    /// site; `categories` are the service's categories (names are what may be proposed). Proposals are
    /// not trusted: the domain keeps only values whose evidence is in the site.
    async fn draft(
        &self,
        site: &Site,
        wanted: &[DraftField],
        categories: &[crate::category::CategoryTerms],
    ) -> Result<Drafted, DrafterError>;
}

/// An email in the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEmail {
    pub id: i64,
    pub to: String,
    pub subject: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub attempts: i32,
    pub last_error: Option<String>,
}

#[async_trait]
pub trait Outbox: Send + Sync {
    async fn queue_email(&self, to: &str, subject: &str, body: &str, now: DateTime<Utc>) -> RepoResult<i64>;

    /// Emails, newest first, optionally only those to `to` (case-insensitive).
    async fn outbox(&self, to: Option<&str>, limit: u64) -> RepoResult<Vec<OutboxEmail>>;

    async fn get_email(&self, id: i64) -> RepoResult<Option<OutboxEmail>>;

    async fn mark_email_sent(&self, id: i64, now: DateTime<Utc>) -> RepoResult<()>;

    async fn mark_email_failed(&self, id: i64, error: &str) -> RepoResult<()>;

    /// How many emails are not sent yet, and when the oldest of them was queued.
    async fn unsent_emails(&self) -> RepoResult<(u64, Option<DateTime<Utc>>)>;
}

/// Delivers an email (SMTP). Only configured deployments have one; without it emails stay queued.
#[async_trait]
pub trait MailSender: Send + Sync + std::fmt::Debug {
    async fn send(&self, email: &OutboxEmail) -> Result<(), String>;
}
