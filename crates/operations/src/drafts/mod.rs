//! Submit by URL: the drafts a signed-in maker builds from their website, and the listing each becomes.
//! Reading the site and drafting run as durable jobs (`crate::worker`); these operations create and
//! edit drafts and queue that work.

pub mod edit;
pub mod listing;
pub mod view;

use crate::public::Pagination;
use crate::worker;
use crate::{Ctx, Descriptor, Method, OpError, OpResult, Operation};
use async_trait::async_trait;
use domain::draft::{Draft, limits};
use domain::ids::DraftId;
use domain::paging::PageRequest;
use domain::ports::RepoError;
use domain::user::{Email, Scope};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use view::{DraftOut, DraftPage, DraftSummaryOut};

pub(crate) use edit::{FaqInput, Item200, Link500, UpdateDraftInput, milestone_input, nullable, story_input};
pub(crate) use listing::{save_listing, to_new_listing, update_draft};

pub(crate) fn descriptors() -> Vec<Descriptor> {
    vec![
        Descriptor::of::<SubmitListing>(),
        Descriptor::of::<ListMyDrafts>(),
        Descriptor::of::<GetDraft>(),
        Descriptor::of::<UpdateDraft>(),
        Descriptor::of::<InviteCofounder>(),
        Descriptor::of::<SubmitDraft>(),
    ]
}

/// The caller's draft, or 404 — also for other people's drafts, so ids cannot be probed.
async fn own_draft(ctx: &Ctx, raw_id: &str) -> OpResult<Draft> {
    let p = ctx.principal()?;
    let id = DraftId::parse(raw_id)?;
    match ctx.app.store.get_draft(id).await? {
        Some(d) if d.owner == p.user_id => Ok(d),
        _ => Err(OpError::NotFound("draft")),
    }
}

/// Changes the caller's draft (404 for anyone else's), retried when the worker saved in between.
pub(crate) async fn change_draft(
    ctx: &Ctx,
    raw_id: &str,
    mut change: impl FnMut(&mut Draft) -> OpResult<()>,
) -> OpResult<Draft> {
    let owner = ctx.principal()?.user_id;
    let id = DraftId::parse(raw_id)?;
    let saved = listing::update_draft(&ctx.app, id, |d| {
        if d.owner != owner {
            return Err(OpError::NotFound("draft"));
        }
        change(d)
    })
    .await?;
    saved.ok_or(OpError::NotFound("draft"))
}

/// Saves the draft's listing when the draft has one (or `create`); see [`listing::save_listing`].
async fn sync_listing(ctx: &Ctx, d: &Draft, create: bool) -> OpResult<Option<i64>> {
    if d.listing_id.is_none() && !create {
        return Ok(None);
    }
    Ok(Some(listing::save_listing(&ctx.app, d).await?.get()))
}

// ---- submit_listing ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitListingInput {
    /// The product's website (http or https; a bare domain is read as https).
    pub url: String,
}

/// Counts one site read for `user` against the daily cap (`domain::draft::crawl_caps::PER_DAY`); a
/// 429 `crawl_quota` with the time until the day's count starts over, once it is spent.
async fn count_crawl(ctx: &Ctx, user: domain::ids::UserId) -> OpResult<crate::quotas::Taken> {
    let cap = crate::quotas::Cap::account_day(
        "crawl_quota",
        "crawls-day",
        user,
        domain::draft::crawl_caps::PER_DAY,
        "sites this account had read in the last day",
    );
    crate::quotas::take(&ctx.app, &[cap]).await
}

#[derive(Debug)]
pub struct SubmitListing;

#[async_trait]
impl Operation for SubmitListing {
    const ID: &'static str = "submit_listing";
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/drafts";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const STATUS: u16 = 201;
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Submit a product by its website URL; the service drafts its profile";
    const DESCRIPTION: &'static str = "Creates a draft with status crawling. The service reads the website \
        (robots.txt respected, public addresses only), then drafts every profile field with verbatim evidence \
        quotes from the site; facts the site does not state stay blank and are listed in not_found_on_website. \
        Poll get_draft every few seconds until status is ready (or failed, with a reason); then correct it with \
        update_draft and save it as a listing with submit_draft. Nothing is published or charged. Send an \
        Idempotency-Key to make a retry return the same draft.";
    type Input = SubmitListingInput;
    type Output = DraftOut;

    fn refine_input_schema(schema: &mut serde_json::Value) {
        crate::refine::set(schema, &["url"], "pattern", domain::draft::SiteUrl::PATTERN.into());
        crate::refine::set(schema, &["url"], "maxLength", domain::draft::SiteUrl::MAX.into());
        crate::refine::set(schema, &["url"], "minLength", 1.into());
    }

    async fn run(ctx: &Ctx, input: SubmitListingInput) -> OpResult<DraftOut> {
        let p = ctx.principal()?;
        let url = domain::draft::SiteUrl::parse("url", &input.url)?;
        crate::moderation::refuse_blocked(&ctx.app, "url", &listing::domain_of(url.as_str())).await?;
        let now = ctx.app.now();
        // The day's count first; then the draft, created only while fewer than the cap of this
        // account's drafts are being read (counted by the store under a lock on the account, so
        // submissions sent at once cannot all pass on one count). Refused, the count goes back.
        let crawl = count_crawl(ctx, p.user_id).await?;
        let d = Draft::new(DraftId::new_random(), p.user_id, url, now);
        let at_once = domain::draft::crawl_caps::CONCURRENT;
        if !ctx.app.store.create_draft_within(&d, at_once).await? {
            crawl.give_back(&ctx.app).await?;
            return Err(OpError::TooMany {
                code: "drafts_in_progress",
                message: format!(
                    "{at_once} of your drafts are still being read; submit another when one is ready (at most {at_once} at once)"
                ),
                retry_after_secs: 30,
            });
        }
        worker::enqueue(&ctx.app, &worker::JobSpec::Draft { draft: d.id, only: None }).await?;
        Ok(DraftOut::from(&d))
    }
}

// ---- list_my_drafts ----

/// Paging only: what list operations without filters take.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PageInput {
    #[schema(default = 1)]
    pub page: Option<i64>,
    #[schema(default = 20)]
    pub per_page: Option<i64>,
}

#[derive(Debug)]
pub struct ListMyDrafts;

#[async_trait]
impl Operation for ListMyDrafts {
    const ID: &'static str = "list_my_drafts";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/drafts";
    const SCOPE: Option<Scope> = Some(Scope::AccountRead);
    const SUMMARY: &'static str = "The caller's drafts, newest first";
    const DESCRIPTION: &'static str = "Lists the caller's drafts newest first with status (crawling, drafting, \
        ready, failed), completeness (0–100) and the listing each was submitted as. Read-only.";
    type Input = PageInput;
    type Output = DraftPage;

    async fn run(ctx: &Ctx, input: PageInput) -> OpResult<DraftPage> {
        let p = ctx.principal()?;
        let page = PageRequest::parse(input.page, input.per_page)?;
        let drafts = ctx.app.store.list_drafts(p.user_id, page).await?;
        let pagination = Pagination::from(&drafts);
        Ok(DraftPage { items: drafts.items.iter().map(DraftSummaryOut::from).collect(), pagination })
    }
}

// ---- get_draft ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftIdInput {
    /// The draft's id.
    #[schema(format = Uuid, max_length = 36)]
    pub id: String,
}

#[derive(Debug)]
pub struct GetDraft;

#[async_trait]
impl Operation for GetDraft {
    const ID: &'static str = "get_draft";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/drafts/{id}";
    const SCOPE: Option<Scope> = Some(Scope::AccountRead);
    const SUMMARY: &'static str = "One draft: every field with value, state and evidence";
    const DESCRIPTION: &'static str = "Returns the draft: status, every profile field with its value, state (ai, \
        not_found, edited, manual, override, deleted) and the evidence quotes it was drafted from, plus FAQs, \
        founders, socials, story, milestones, SEO, the competitor comparison, completeness and what is missing. \
        404 when the draft is unknown or not the caller's. Poll every few seconds while status is crawling or \
        drafting; once ready, show the person the values with their evidence, change what they want with \
        update_draft, then call submit_draft.";
    type Input = DraftIdInput;
    type Output = DraftOut;

    async fn run(ctx: &Ctx, input: DraftIdInput) -> OpResult<DraftOut> {
        Ok(DraftOut::from(&own_draft(ctx, &input.id).await?))
    }
}

// ---- update_draft ----

#[derive(Debug)]
pub struct UpdateDraft;

#[async_trait]
impl Operation for UpdateDraft {
    const ID: &'static str = "update_draft";
    const METHOD: Method = Method::Patch;
    const PATH: &'static str = "/drafts/{id}";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Edit a draft: set, remove, lock, restore or regenerate fields and more";
    const DESCRIPTION: &'static str = "Changes only the keys sent. fields sets values (state edited, or manual where \
        the service found nothing) and null removes one (deleted); lock_fields protects fields from redrafts \
        (override); restore returns fields to the service's value; regenerate (up to 5) redrafts fields from the \
        website in a few seconds (poll get_draft). faqs, founders and milestones replace their lists; \
        company_socials, founder_socials, story and seo replace those objects; competitor_url reads a \
        competitor's site and compares (empty clears). When the draft was submitted, the listing is updated too. \
        Unknown keys are refused. Next: submit_draft saves it as a listing.";
    type Input = UpdateDraftInput;
    type Output = DraftOut;

    fn refine_input_schema(schema: &mut serde_json::Value) {
        use crate::refine;
        // Each field's bounds: the domain's "Draft editable fields" table.
        for f in domain::draft::DraftField::ALL {
            match f.shape() {
                domain::draft::FieldShape::Text { max } => {
                    refine::set(schema, &["fields", f.as_str()], "maxLength", max.into())
                }
                domain::draft::FieldShape::List { max_items, max_each } => {
                    refine::set(schema, &["fields", f.as_str()], "maxItems", max_items.into());
                    refine::set(schema, &["fields", f.as_str(), "[]"], "maxLength", max_each.into());
                }
            }
        }
        refine::mark(schema, &["fields", "categories", "[]"], "category");
        use domain::draft::limits;
        for (list, max) in
            [("lock_fields", limits::LOCK_FIELDS), ("regenerate", limits::REGENERATE), ("restore", limits::RESTORE)]
        {
            refine::set(schema, &[list], "maxItems", max.into());
        }
        refine::set(schema, &["faqs"], "maxItems", domain::social::Faq::MAX_ITEMS.into());
        edit::FaqInput::bounds(schema, &["faqs", "[]"]);
        refine::set(schema, &["founders"], "maxItems", limits::FOUNDERS.into());
        edit::FounderInput::bounds(schema, &["founders", "[]"]);
        edit::StoryInput::bounds(schema, &["story"]);
        refine::set(schema, &["milestones"], "maxItems", limits::MILESTONES.into());
        edit::MilestoneInput::bounds(schema, &["milestones", "[]"]);
        refine::set(schema, &["competitor_url"], "maxLength", limits::COMPETITOR_URL.into());
        refine::set(schema, &["seo", "title"], "maxLength", limits::SEO_TITLE.into());
        refine::set(schema, &["seo", "meta"], "maxLength", limits::SEO_META.into());
        for list in ["lock_fields", "regenerate", "restore"] {
            refine::draft_field_names(schema, &[list]);
        }
        refine::socials(schema, &["company_socials"]);
        refine::socials(schema, &["founder_socials"]);
        let competitor = format!("^$|{}", domain::draft::SiteUrl::PATTERN);
        refine::set(schema, &["competitor_url"], "pattern", competitor.into());
    }

    async fn run(ctx: &Ctx, input: UpdateDraftInput) -> OpResult<DraftOut> {
        let id = input.id.clone();
        let cats = ctx.app.store.all_categories().await?;
        let edit = edit::DraftEdit::parse(input, |raw| {
            let raw = raw.trim();
            cats.iter().find(|c| c.name.eq_ignore_ascii_case(raw) || c.slug.as_str() == raw).map(|c| c.name.clone())
        })?;
        if matches!(edit.competitor, Some(Some(_))) {
            // Counted before anything is saved, so a refusal leaves the draft as it was.
            count_crawl(ctx, ctx.principal()?.user_id).await?;
        }
        let saved = change_draft(ctx, &id, |d| {
            if !edit.regenerate.is_empty() && !d.status().is_ready() {
                return Err(OpError::Conflict {
                    code: "draft_not_ready",
                    message: format!("the draft is {}; regenerate works on a ready draft", d.status().as_str()),
                });
            }
            for (i, f) in edit.regenerate.iter().enumerate() {
                if !d.profile.may_regenerate(*f) {
                    return Err(domain::ValidationError::new(
                        format!("regenerate[{i}]"),
                        "the field is locked (override); restore it first to let the service redraft it",
                    )
                    .into());
                }
            }
            edit.apply(d);
            if d.listing_id.is_some() {
                // A submitted draft must stay a valid listing.
                to_new_listing(d, &cats, ctx.app.now())?;
            }
            Ok(())
        })
        .await?;
        sync_listing(ctx, &saved, false).await?;
        if !edit.regenerate.is_empty() {
            worker::enqueue(&ctx.app, &worker::JobSpec::Draft { draft: saved.id, only: Some(edit.regenerate.clone()) })
                .await?;
        }
        if let Some(Some(url)) = &edit.competitor {
            worker::enqueue(&ctx.app, &worker::JobSpec::Competitor { draft: saved.id, url: url.as_str().to_owned() })
                .await?;
        }
        Ok(DraftOut::from(&saved))
    }
}

// ---- invite_cofounder ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteInput {
    #[schema(format = Uuid, max_length = 36)]
    pub id: String,
    /// The co-founder's email address.
    #[schema(format = Email)]
    pub email: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InviteOut {
    pub id: i64,
    pub email: String,
    /// sent (an SMTP server is configured) or queued (in the outbox).
    pub delivery: String,
    /// Invites this listing has used, of 10.
    pub invites_used: u64,
    pub invites_left: u64,
}

#[derive(Debug)]
pub struct InviteCofounder;

#[async_trait]
impl Operation for InviteCofounder {
    const ID: &'static str = "invite_cofounder";
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/drafts/{id}/invites";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const STATUS: u16 = 201;
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Invite a co-founder by email";
    const DESCRIPTION: &'static str = "Emails the address an invite link; opening it and accepting (signed in on \
        the site) adds that person as a co-founder member of the listing. Up to 10 invite emails per listing, \
        sending again to the same address included (it sends a fresh link); an address receives at most 3 \
        invites a day (429 with Retry-After past a cap).";
    fn refine_input_schema(schema: &mut serde_json::Value) {
        crate::refine::set(schema, &["email"], "maxLength", domain::user::Email::MAX.into());
        crate::refine::set(schema, &["email"], "minLength", domain::user::Email::MIN.into());
    }
    type Input = InviteInput;
    type Output = InviteOut;

    async fn run(ctx: &Ctx, input: InviteInput) -> OpResult<InviteOut> {
        let p = ctx.principal()?;
        let email = Email::parse(&input.email).map_err(|e| e.named("email"))?;
        let d = own_draft(ctx, &input.id).await?;
        let store = ctx.app.store.as_ref();
        // Counted before anything changes: every send (a repeat too) uses one of the listing's invites,
        // and no address receives more than a few a day from anyone.
        crate::accounts::require_verified(&ctx.app, p.user_id, "inviting a co-founder").await?;
        let sends = {
            use crate::quotas::{Cap, account, take};
            use domain::throttle::mail;
            let caps = [
                account(p.user_id),
                Cap {
                    code: "mail_quota",
                    purpose: "invite-sends",
                    subject: d.id.to_string(),
                    limit: mail::INVITE_SENDS_PER_LISTING,
                    window: mail::ever(),
                    what: "invite emails sent for this listing",
                },
                Cap {
                    code: "mail_quota",
                    purpose: "invite-to",
                    subject: email.as_str().to_lowercase(),
                    limit: mail::INVITES_TO_ADDRESS_PER_DAY,
                    window: mail::day(),
                    what: "invites sent to this address today",
                },
            ];
            take(&ctx.app, &caps).await?.counts[1]
        };
        let token = ctx.app.secrets.random_token();
        let hash = ctx.app.secrets.hash_token(&token);
        let now = ctx.app.now();
        let invite = match store.create_invite(d.id, email.as_str(), &hash, now).await {
            Ok(i) => i,
            Err(RepoError::Conflict(_)) => {
                return Err(domain::ValidationError::new(
                    "email",
                    format!("this listing already has {} invites, the most it may have", limits::INVITES_PER_LISTING),
                )
                .into());
            }
            Err(e) => return Err(e.into()),
        };
        let inviter = store.get_user(p.user_id).await?.map(|u| u.email.to_string()).unwrap_or_default();
        let product = match &d.profile.field(domain::draft::DraftField::Name).value {
            Some(domain::draft::FieldValue::Text(n)) => n.clone(),
            _ => listing::domain_of(&d.url),
        };
        let link = format!("{}/invites/{token}", ctx.public_url);
        let body = format!(
            "Hello,\n\n{inviter} invited you to join {product} as a co-founder on launchdir.\n\nOpen this link to \
             accept (you will be asked to sign in or create an account):\n{link}\n\nIf you did not expect this \
             email, ignore it; nothing happens unless you accept.\n"
        );
        let subject = format!("Join {product} on launchdir");
        let handed = worker::send_email(&ctx.app, email.as_str(), &subject, &body, now).await?;
        let delivery = if handed { "sent" } else { "queued" };
        let used = u64::try_from(sends).unwrap_or_default();
        Ok(InviteOut {
            id: invite.id,
            email: invite.email,
            delivery: delivery.into(),
            invites_used: used,
            invites_left: (limits::INVITES_PER_LISTING as u64).saturating_sub(used),
        })
    }
}

// ---- submit_draft ----

#[derive(Debug, Serialize, ToSchema)]
pub struct SavedListingOut {
    pub listing_id: i64,
    pub draft_id: String,
    pub slug: String,
    pub name: String,
    pub url: String,
    /// draft: saved, not published. Publish with choose_free_listing or a paid launch.
    pub status: String,
    /// Whether this call created the listing (false: it updated the draft's listing).
    pub created: bool,
}

#[derive(Debug)]
pub struct SubmitDraft;

#[async_trait]
impl Operation for SubmitDraft {
    const ID: &'static str = "submit_draft";
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/drafts/{id}/submit";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Save a ready draft as a listing (not published)";
    const DESCRIPTION: &'static str = "Saves the draft as the caller's listing and returns listing_id; running it \
        again after edits updates the same listing, and update_draft on a submitted draft updates it too. The \
        listing is saved, not published: publish it with choose_free_listing or a paid launch (create_checkout). \
        The draft must be ready and have a name; 409 while it is still being drafted.";
    type Input = DraftIdInput;
    type Output = SavedListingOut;

    async fn run(ctx: &Ctx, input: DraftIdInput) -> OpResult<SavedListingOut> {
        let d = own_draft(ctx, &input.id).await?;
        if !d.status().is_ready() {
            return Err(OpError::Conflict {
                code: "draft_not_ready",
                message: format!("the draft is {}; submit it once it is ready", d.status().as_str()),
            });
        }
        // The domain may have been blocked since the draft was started (submit_listing checked it then).
        crate::moderation::refuse_blocked(&ctx.app, "id", &listing::domain_of(&d.url)).await?;
        let created = d.listing_id.is_none();
        let id = sync_listing(ctx, &d, true).await?.ok_or(OpError::NotFound("listing"))?;
        let l =
            domain::ports::ListingRepository::get_listing(ctx.app.store.as_ref(), domain::ids::ListingId::from_db(id))
                .await?
                .ok_or(OpError::NotFound("listing"))?;
        Ok(SavedListingOut {
            listing_id: id,
            draft_id: d.id.to_string(),
            slug: l.slug.to_string(),
            name: l.profile.name.clone(),
            url: l.profile.url.clone(),
            status: l.lifecycle.status().as_str().to_owned(),
            created,
        })
    }
}
