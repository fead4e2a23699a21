//! Claims: a signed-in person proves control of a listing's domain — a DNS TXT record, a `<meta>` tag
//! on the homepage, a file under `/.well-known/`, or a link emailed to an administrator address at the
//! domain — and becomes an owner of the listing. Verified is not paid: plan and placement stay as they
//! are. Another person's claim answers 404, like an unknown one.

use crate::drafts::PageInput;
use crate::public::Pagination;
use crate::{Ctx, Descriptor, Method, OpError, OpResult, Operation, ReadCache, worker};
use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use domain::ValidationError;
use domain::claim::{
    self, Claim, ClaimCheck, ClaimMethod, ClaimStatus, EMAIL_LOCAL_PARTS, Instructions, META_NAME, NewClaim, NotProven,
};
use domain::ids::ClaimId;
use domain::listing::{Listing, ListingStatus};
use domain::paging::PageRequest;
use domain::slug::Slug;
use domain::user::Scope;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub(crate) fn descriptors() -> Vec<Descriptor> {
    vec![Descriptor::of::<ClaimListing>(), Descriptor::of::<VerifyClaim>(), Descriptor::of::<ListMyClaims>()]
}

/// Email claims one person may start on one listing per day: each sends an email to the domain's
/// administrators, so this is a cap on what we send them.
pub const EMAIL_CLAIMS_PER_DAY: u64 = 3;

/// Where the emailed link points (a page of the service, not an API operation).
pub fn email_link(public_url: &str, token: &str) -> String {
    format!("{public_url}/claims/confirm/{token}")
}

// ---- outputs ----

#[derive(Debug, Serialize, ToSchema)]
pub struct DnsRecordOut {
    /// Always TXT.
    #[serde(rename = "type")]
    pub record_type: String,
    /// The record's name (other TXT records there may stay).
    pub name: String,
    pub value: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MetaTagOut {
    /// Paste this inside the homepage's `<head>`.
    pub tag: String,
    pub name: String,
    pub content: String,
    /// The page it must be on.
    pub page: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FileOut {
    /// Where the file must answer (HTTP 200).
    pub url: String,
    pub path: String,
    /// The file's whole content (surrounding whitespace is ignored).
    pub body: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EmailOut {
    /// The address the link was emailed to.
    pub sent_to: String,
    /// The local parts an email claim may use, at the listing's domain.
    pub accepted_local_parts: Vec<String>,
}

/// Exactly what to publish (or, for email, where the link went). One of dns, meta, file, email is set.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstructionsOut {
    /// The same, in words for a person.
    pub summary: String,
    pub dns: Option<DnsRecordOut>,
    pub meta: Option<MetaTagOut>,
    pub file: Option<FileOut>,
    pub email: Option<EmailOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimCheckOut {
    pub checked_at: String,
    pub verified: bool,
    /// What the check looked for.
    pub looked_for: String,
    /// What it found instead (or the proof it found).
    pub found: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimOut {
    pub claim_id: i64,
    pub listing_id: i64,
    pub slug: String,
    pub listing_name: String,
    /// The domain control is proven for.
    pub domain: String,
    /// dns, meta, file or email.
    pub method: String,
    /// pending, verified or expired (7 days after it was made).
    pub status: String,
    pub created_at: String,
    pub expires_at: String,
    pub verified_at: Option<String>,
    pub instructions: InstructionsOut,
    /// The last check (verify_claim, or the opened email link); null before the first.
    pub last_check: Option<ClaimCheckOut>,
    /// What to do next, for a person.
    pub next_step: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimPage {
    pub items: Vec<ClaimOut>,
    pub pagination: Pagination,
}

/// The domain claims prove for a listing: its stored domain, else its homepage's host; no `www.`.
fn listing_domain(l: &Listing) -> String {
    let d = if l.profile.domain.trim().is_empty() {
        crate::drafts::listing::domain_of(&l.profile.url)
    } else {
        l.profile.domain.clone()
    };
    claim::claim_domain(&d)
}

fn instructions_out(c: &Claim, l: &Listing) -> InstructionsOut {
    let domain = listing_domain(l);
    let token = c.token.as_deref().unwrap_or_default();
    let none = InstructionsOut { summary: String::new(), dns: None, meta: None, file: None, email: None };
    match claim::instructions(c.method, &domain, &l.profile.url, token, c.email.as_deref()) {
        Instructions::Dns { name, value } => InstructionsOut {
            summary: format!(
                "Add a DNS TXT record named {name} with the value {value} (keep your other records), then call \
                 verify_claim. DNS changes can take a few minutes to appear."
            ),
            dns: Some(DnsRecordOut { record_type: "TXT".into(), name, value }),
            ..none
        },
        Instructions::Meta { tag, name, content } => InstructionsOut {
            summary: format!("Put {tag} inside the <head> of {}, then call verify_claim.", l.profile.url),
            meta: Some(MetaTagOut { tag, name, content, page: l.profile.url.clone() }),
            ..none
        },
        Instructions::File { url, path, body } => InstructionsOut {
            summary: format!("Publish a text file at {url} containing exactly {body}, then call verify_claim."),
            file: Some(FileOut { url, path, body }),
            ..none
        },
        Instructions::Email { to } => InstructionsOut {
            summary: format!(
                "A link was emailed to {to}; opening it while signed in as the account that made the claim \
                 verifies it (once, within 7 days). verify_claim is not needed."
            ),
            email: Some(EmailOut {
                sent_to: to,
                accepted_local_parts: EMAIL_LOCAL_PARTS.iter().map(|s| (*s).to_owned()).collect(),
            }),
            ..none
        },
    }
}

fn next_step(c: &Claim, status: ClaimStatus) -> String {
    match (status, c.method) {
        (ClaimStatus::Verified, _) => {
            "Verified: you are an owner of this listing (see list_my_listings). Verification does not change its \
             plan or placement."
                .into()
        }
        (ClaimStatus::Expired, _) => "Expired: start a new claim with claim_listing.".into(),
        (ClaimStatus::Pending, ClaimMethod::Email) => "Open the link in the email (check spam).".into(),
        (ClaimStatus::Pending, _) => "Publish what instructions say, then call verify_claim.".into(),
    }
}

fn claim_out(c: &Claim, l: &Listing, now: DateTime<Utc>) -> ClaimOut {
    let status = c.status_at(now);
    ClaimOut {
        claim_id: c.id.get(),
        listing_id: l.id.get(),
        slug: l.slug.to_string(),
        listing_name: l.profile.name.clone(),
        domain: listing_domain(l),
        method: c.method.as_str().into(),
        status: status.as_str().into(),
        created_at: c.created_at.to_rfc3339(),
        expires_at: c.expires_at.to_rfc3339(),
        verified_at: c.verified_at.map(|t| t.to_rfc3339()),
        instructions: instructions_out(c, l),
        last_check: c.last_check.as_ref().map(|k| ClaimCheckOut {
            checked_at: k.at.to_rfc3339(),
            verified: k.verified,
            looked_for: k.looked_for.clone(),
            found: k.found.clone(),
        }),
        next_step: next_step(c, status),
    }
}

async fn claimed_listing(app: &crate::App, c: &Claim) -> OpResult<Listing> {
    app.store.get_listing(c.listing).await?.ok_or(OpError::NotFound("claim"))
}

/// After a verified claim: the listing's other owners are told who proved control, how and when.
async fn tell_owners(app: &crate::App, c: &Claim, l: &Listing) -> OpResult<()> {
    let claimant = app.store.get_user(c.user).await?.map(|u| u.email.to_string()).unwrap_or_default();
    let page = domain::own::listing_page(&app.public_url, l.slug.as_str());
    let subject = format!("{} has a new owner on launchdir", l.profile.name);
    let body = format!(
        "Hello,\n\n{claimant} proved control of {domain} ({method} claim) on {at} and is now also an owner of {name} \
         on launchdir ({page}).\n\nYou stay an owner. If you did not expect this, someone with access to the \
         domain's {method} set it up: check who did, and reply to this email so the site team can look into it.\n",
        domain = listing_domain(l),
        method = c.method.as_str(),
        at = c.verified_at.unwrap_or(c.created_at).to_rfc3339(),
        name = l.profile.name,
    );
    for (user, email) in app.store.listing_owners(l.id).await? {
        if user != c.user {
            worker::send_email(app, email.as_str(), &subject, &body, app.now()).await?;
        }
    }
    Ok(())
}

/// Verifies `c` with `check` and tells the other owners; `Ok(false)` when it was no longer pending.
async fn complete(app: &crate::App, c: &Claim, l: &Listing, check: &ClaimCheck) -> OpResult<bool> {
    let owners_before = app.store.listing_owners(l.id).await?;
    // The domain decides whether the claim may be verified now (pending, not expired); storage applies
    // the move only if nobody moved it since it was read.
    let Ok(to) = c.verified(check.at) else { return Ok(false) };
    if !app.store.complete_claim(c.id, c.status(), to, check).await? {
        return Ok(false);
    }
    tracing::info!(claim = c.id.get(), listing = l.id.get(), method = c.method.as_str(), "claim verified");
    if owners_before.iter().any(|(u, _)| *u != c.user) {
        let verified = app.store.my_claim(c.user, c.id).await?.ok_or(OpError::NotFound("claim"))?;
        tell_owners(app, &verified, l).await?;
    }
    Ok(true)
}

// ---- claim_listing ----

/// dns (a TXT record), meta (a tag on the homepage), file (under /.well-known/) or email (a link sent to
/// an administrator address at the listing's domain).
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MethodParam {
    Dns,
    Meta,
    File,
    Email,
}

impl From<MethodParam> for ClaimMethod {
    fn from(m: MethodParam) -> Self {
        match m {
            MethodParam::Dns => Self::Dns,
            MethodParam::Meta => Self::Meta,
            MethodParam::File => Self::File,
            MethodParam::Email => Self::Email,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimListingInput {
    /// The listing's slug.
    pub slug: String,
    #[schema(inline)]
    pub method: MethodParam,
    /// For method email (required there, ignored by the other methods): admin@, administrator@,
    /// webmaster@, hostmaster@ or postmaster@ the listing's domain.
    #[schema(format = Email)]
    pub email: Option<String>,
}

#[derive(Debug)]
pub struct ClaimListing;

#[async_trait]
impl Operation for ClaimListing {
    const ID: &'static str = "claim_listing";
    const NOT_FOUND: bool = true;
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/claims";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const STATUS: u16 = 201;
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Claim a listing by proving control of its domain";
    const DESCRIPTION: &'static str = "Starts a claim on a published listing (live, or scheduled in the launch \
        calendar) and returns exactly what to publish: a DNS TXT record (name and value), a <meta> tag for the \
        homepage's <head>, or a file under /.well-known/ with its body; then call verify_claim with claim_id. \
        With method email, a link is emailed to an administrator address at the listing's domain (admin, \
        administrator, webmaster, hostmaster or postmaster @domain; at most 3 a day per listing); opening it \
        signed in on the site as the claiming account verifies (a link opened by anyone else, such as a mail \
        scanner, changes nothing) — verify_claim is not needed. Claims expire after 7 days; asking again for the same method \
        while one is pending returns that claim and its token. A verified claim makes the caller an owner (the \
        current owners are told); it changes nothing about plan or placement. 404 for an unknown or unpublished \
        slug; 409 when the caller already owns the listing.";
    type Input = ClaimListingInput;
    type Output = ClaimOut;

    fn refine_input_schema(schema: &mut serde_json::Value) {
        crate::refine::set(schema, &["email"], "maxLength", domain::user::Email::MAX.into());
        schema["if"] = serde_json::json!({"properties": {"method": {"const": "email"}}, "required": ["method"]});
        schema["then"] = serde_json::json!({"required": ["email"], "properties": {"email": {"type": "string"}}});
    }

    async fn run(ctx: &Ctx, i: ClaimListingInput) -> OpResult<ClaimOut> {
        let user = ctx.principal()?.user_id;
        let slug = Slug::parse(&i.slug).map_err(|e| e.named("slug"))?;
        let method = ClaimMethod::from(i.method);
        let email = match (method, i.email) {
            (ClaimMethod::Email, None) => {
                return Err(ValidationError::new("email", "is required for method email").into());
            }
            // The address's syntax is checked before any lookup, so a bad body is a 400 whatever the slug.
            (ClaimMethod::Email, Some(e)) => {
                domain::user::Email::parse(&e).map_err(|err| err.named("email"))?;
                Some(e)
            }
            // Only the email method sends anything; another method ignores an address given with it.
            (_, _) => None,
        };
        let store = ctx.app.store.as_ref();
        let l = store
            .get_listing_by_slug(&slug)
            .await?
            .filter(|l| matches!(l.lifecycle.status(), ListingStatus::Live | ListingStatus::Scheduled))
            .ok_or(OpError::NotFound("listing"))?;
        crate::moderation::refuse_blocked(&ctx.app, "slug", &listing_domain(&l)).await?;
        if store.owned_listing(user, l.id).await?.is_some() {
            return Err(OpError::Conflict {
                code: "already_owner",
                message: format!("you already own this listing (listing_id {}); see get_my_listing", l.id),
            });
        }
        let now = ctx.app.now();
        let email = match email {
            Some(e) => {
                let e = claim::check_claim_email(&e, &listing_domain(&l))?;
                if store.email_claims_since(user, l.id, now - Duration::days(1)).await? >= EMAIL_CLAIMS_PER_DAY {
                    return Err(OpError::Conflict {
                        code: "too_many_claim_emails",
                        message: format!(
                            "{EMAIL_CLAIMS_PER_DAY} claim emails for this listing were sent in the last 24 hours; \
                             open one of them, or use dns, meta or file"
                        ),
                    });
                }
                crate::accounts::require_verified(&ctx.app, user, "a claim by email").await?;
                // Across accounts too: a domain's administrators get a few claim emails a day at most.
                crate::quotas::take(
                    &ctx.app,
                    &[
                        crate::quotas::account(user),
                        crate::quotas::Cap {
                            code: "mail_quota",
                            purpose: "claim-mail-domain",
                            subject: listing_domain(&l),
                            limit: domain::throttle::mail::CLAIM_EMAILS_PER_DOMAIN_PER_DAY,
                            window: domain::throttle::mail::day(),
                            what: "claim emails sent to this domain today",
                        },
                    ],
                )
                .await?;
                Some(e)
            }
            None => {
                if let Some(open) = store.open_claim(user, l.id, method, now).await? {
                    return Ok(claim_out(&open, &l, now));
                }
                None
            }
        };
        let secret = ctx.app.secrets.random_token();
        let new = NewClaim {
            user,
            listing: l.id,
            method,
            email: email.clone(),
            token: (method != ClaimMethod::Email).then(|| secret.clone()),
            token_hash: ctx.app.secrets.hash_token(&secret),
            created_at: now,
        };
        let c = store.create_claim(&new).await?;
        if let Some(to) = email {
            let link = email_link(&ctx.public_url, &secret);
            let body = format!(
                "Hello,\n\nSomeone signed in to launchdir asked to claim {name} ({domain}) and to prove control of \
                 the domain by this address.\n\nOpen this link to confirm (it works once, until {until}, and only \
                 for the account that made the claim, signed in):\n{link}\n\n\
                 Confirming makes that account an owner of the listing {page}. If you did not expect this email, \
                 ignore it; nothing happens unless the claimant opens the link.\n",
                name = l.profile.name,
                domain = listing_domain(&l),
                until = c.expires_at.to_rfc3339(),
                page = domain::own::listing_page(&ctx.public_url, l.slug.as_str()),
            );
            let subject = format!("Confirm the claim of {} on launchdir", l.profile.name);
            worker::send_email(&ctx.app, &to, &subject, &body, now).await?;
        }
        Ok(claim_out(&c, &l, now))
    }
}

// ---- verify_claim ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimIdInput {
    /// From claim_listing or list_my_claims.
    #[schema(minimum = 1)]
    pub claim_id: i64,
}

/// Looks for the proof of a DNS, meta or file claim.
async fn look(app: &crate::App, c: &Claim, l: &Listing) -> Result<String, NotProven> {
    let token = c.token.as_deref().unwrap_or_default();
    let domain = listing_domain(l);
    match c.method {
        ClaimMethod::Dns => {
            let name = format!("{}.{domain}", claim::DNS_LABEL);
            let mut seen = Vec::new();
            for at in [&name, &domain] {
                match app.dns.txt(at).await {
                    Ok(records) => match claim::check_txt(&records, at, token) {
                        Ok(()) => return Ok(format!("the TXT record at {at}")),
                        Err(e) => seen.push(format!("at {at}: {}", e.found)),
                    },
                    Err(e) => seen.push(format!("at {at}: {e}")),
                }
            }
            Err(NotProven {
                looked_for: format!("a TXT record {:?} at {name} (or {domain})", claim::proof(token)),
                found: seen.join("; "),
            })
        }
        ClaimMethod::Meta => match app.reader.read_homepage(&l.profile.url).await {
            Ok(home) => {
                let contents: Vec<String> =
                    home.meta.into_iter().filter(|(n, _)| n == META_NAME).map(|(_, c)| c).collect();
                claim::check_meta(&contents, token).map(|()| format!("the meta tag on {}", home.url))
            }
            Err(e) => Err(NotProven {
                looked_for: format!("<meta name=\"{META_NAME}\" content=\"{token}\"> on {}", l.profile.url),
                found: e.to_string(),
            }),
        },
        ClaimMethod::File => {
            let url = claim::file_url(&l.profile.url);
            match app.reader.read_file(&url).await {
                Ok(body) => claim::check_file(&body, token).map(|()| format!("the file at {url}")),
                Err(e) => Err(NotProven {
                    looked_for: format!("{url} containing {:?}", claim::proof(token)),
                    found: e.to_string(),
                }),
            }
        }
        ClaimMethod::Email => Err(NotProven {
            looked_for: "the emailed link to be opened".into(),
            found: "verify_claim does not check email claims".into(),
        }),
    }
}

#[derive(Debug)]
pub struct VerifyClaim;

#[async_trait]
impl Operation for VerifyClaim {
    const ID: &'static str = "verify_claim";
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/claims/{claim_id}/verify";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const SUMMARY: &'static str = "Check the DNS record, meta tag or file of a pending claim";
    const DESCRIPTION: &'static str = "Looks for the proof claim_listing asked for: every TXT record at the DNS \
        name (and the bare domain), the <meta> tag in the homepage's <head> (robots.txt obeyed; same-site \
        redirects), or the file under /.well-known/ (same-site redirects). On success the claim is verified and the \
        caller becomes an owner of the listing (it then appears in list_my_listings); the current owners are told \
        by email. Verifying a verified claim returns it unchanged. 409 claim_not_verified says what was looked for \
        and what was found (also kept as last_check); 409 claim_expired after 7 days; 409 for email claims, which \
        verify when their link is opened. 404 for another person's claim.";
    type Input = ClaimIdInput;
    type Output = ClaimOut;

    async fn run(ctx: &Ctx, i: ClaimIdInput) -> OpResult<ClaimOut> {
        let user = ctx.principal()?.user_id;
        let id = ClaimId::parse(i.claim_id)?;
        let app = &ctx.app;
        let c = app.store.my_claim(user, id).await?.ok_or(OpError::NotFound("claim"))?;
        let l = claimed_listing(app, &c).await?;
        let now = app.now();
        match (c.status_at(now), c.method) {
            (ClaimStatus::Verified, _) => return Ok(claim_out(&c, &l, now)),
            (ClaimStatus::Expired, _) => {
                return Err(OpError::Conflict {
                    code: "claim_expired",
                    message: format!(
                        "the claim expired on {}; start a new one with claim_listing",
                        c.expires_at.to_rfc3339()
                    ),
                });
            }
            (ClaimStatus::Pending, ClaimMethod::Email) => {
                return Err(OpError::Conflict {
                    code: "claim_by_email",
                    message: format!(
                        "this claim verifies when the link emailed to {} is opened; verify_claim checks dns, meta and \
                         file claims",
                        c.email.as_deref().unwrap_or("the address")
                    ),
                });
            }
            (ClaimStatus::Pending, _) => {}
        }
        let result = look(app, &c, &l).await;
        let now = app.now();
        match result {
            Ok(found) => {
                let check = ClaimCheck {
                    at: now,
                    verified: true,
                    looked_for: instructions_out(&c, &l).summary,
                    found: format!("found {found}"),
                };
                complete(app, &c, &l, &check).await?;
            }
            Err(e) => {
                let check =
                    ClaimCheck { at: now, verified: false, looked_for: e.looked_for.clone(), found: e.found.clone() };
                app.store.record_claim_check(c.id, &check).await?;
                return Err(OpError::Conflict {
                    code: "claim_not_verified",
                    message: format!("not verified: looked for {}; found {}", e.looked_for, e.found),
                });
            }
        }
        let c = app.store.my_claim(user, id).await?.ok_or(OpError::NotFound("claim"))?;
        Ok(claim_out(&c, &l, app.now()))
    }
}

// ---- list_my_claims ----

#[derive(Debug)]
pub struct ListMyClaims;

#[async_trait]
impl Operation for ListMyClaims {
    const ID: &'static str = "list_my_claims";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/claims";
    const SCOPE: Option<Scope> = Some(Scope::AccountRead);
    const SUMMARY: &'static str = "The caller's claims with status and instructions";
    const DESCRIPTION: &'static str = "Lists the caller's claims, newest first: listing, method, status (pending, \
        verified, expired), what to publish, and the last check with what it looked for and found. Read-only.";
    type Input = PageInput;
    type Output = ClaimPage;

    async fn run(ctx: &Ctx, i: PageInput) -> OpResult<ClaimPage> {
        let user = ctx.principal()?.user_id;
        let page = PageRequest::parse(i.page, i.per_page)?;
        let claims = ctx.app.store.my_claims(user, page).await?;
        let now = ctx.app.now();
        let mut items = Vec::with_capacity(claims.items.len());
        for c in &claims.items {
            if let Some(l) = ctx.app.store.get_listing(c.listing).await? {
                items.push(claim_out(c, &l, now));
            }
        }
        Ok(ClaimPage { pagination: Pagination::from(&claims), items })
    }
}

/// What opening an emailed claim link did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmailLinkOutcome {
    /// The claim is verified now: the person owns the listing.
    Verified {
        listing: String,
        slug: String,
        domain: String,
    },
    /// It was verified before (the link works once).
    AlreadyVerified {
        listing: String,
        slug: String,
    },
    Expired {
        listing: String,
    },
    /// No claim has this link.
    Unknown,
    /// Pending, and opened by nobody signed in (a mail scanner fetching every link, or the claimant
    /// before signing in): nothing changed; the claimant signs in and the link verifies.
    SignInFirst {
        listing: String,
    },
    /// Pending, and opened by someone signed in as another account: nothing changed.
    NotYours {
        listing: String,
    },
}

/// Opens an emailed claim link: verifies its pending claim once (the link's token is the proof that the
/// email reached the domain's administrator address).
///
/// Only the claimant, signed in, verifies by opening it (`opener`): mail gateways (Safe Links,
/// Proofpoint, Mimecast) fetch every link in a message on arrival, and a link that verified for anyone
/// would hand the listing to whoever asked for the claim before a person read the mail.
pub async fn open_email_link(
    app: &crate::App,
    reads: &ReadCache,
    token: &str,
    opener: Option<domain::ids::UserId>,
) -> OpResult<EmailLinkOutcome> {
    let Some(c) = app.store.claim_by_token_hash(&app.secrets.hash_token(token)).await? else {
        return Ok(EmailLinkOutcome::Unknown);
    };
    let l = claimed_listing(app, &c).await?;
    let now = app.now();
    let name = l.profile.name.clone();
    match c.status_at(now) {
        ClaimStatus::Verified => Ok(EmailLinkOutcome::AlreadyVerified { listing: name, slug: l.slug.to_string() }),
        ClaimStatus::Expired => Ok(EmailLinkOutcome::Expired { listing: name }),
        ClaimStatus::Pending if opener.is_none() => Ok(EmailLinkOutcome::SignInFirst { listing: name }),
        ClaimStatus::Pending if opener != Some(c.user) => Ok(EmailLinkOutcome::NotYours { listing: name }),
        ClaimStatus::Pending => {
            let to = c.email.clone().unwrap_or_default();
            let check = ClaimCheck {
                at: now,
                verified: true,
                looked_for: format!("the link emailed to {to} to be opened"),
                found: format!("the link was opened at {}", now.to_rfc3339()),
            };
            if !complete(app, &c, &l, &check).await? {
                return Ok(EmailLinkOutcome::AlreadyVerified { listing: name, slug: l.slug.to_string() });
            }
            crate::public_data_changed(app, reads).await;
            Ok(EmailLinkOutcome::Verified { listing: name, slug: l.slug.to_string(), domain: listing_domain(&l) })
        }
    }
}
