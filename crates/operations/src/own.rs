//! My listings: what a signed-in maker does with the listings they own after submitting a draft —
//! read them in any status, edit them (every edit kept as a before/after version), post updates,
//! milestones, the founder story and interview answers, and choose the free plan. Other people's
//! listings answer 404, like unknown ones.

use crate::drafts::{FaqInput, Item200, Link500, PageInput, milestone_input, nullable, story_input};
use crate::public::Pagination;
use crate::public::listings::{ListingProfileOut, MilestoneOut, profile_out};
use crate::{Ctx, Descriptor, Method, OpError, OpResult, Operation, worker};
use async_trait::async_trait;
use domain::ValidationError;
use domain::badge::{BadgeKind, BadgeMode, BadgeShape, BadgeSize};
use domain::ids::{ListingId, MilestoneId, QuestionId};
use domain::interview::{InterviewAnswer, InterviewAnswerText};
use domain::listing::{Listing, ListingProfile, ListingStatus, UnlockedSections};
use domain::own::{OwnEdit, limits};
use domain::paging::PageRequest;
use domain::sections::{ListingUpdate, Story};
use domain::user::Scope;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use utoipa::ToSchema;

pub(crate) fn descriptors() -> Vec<Descriptor> {
    vec![
        Descriptor::of::<ListMyListings>(),
        Descriptor::of::<GetMyListing>(),
        Descriptor::of::<UpdateMyListing>(),
        Descriptor::of::<PostListingUpdate>(),
        Descriptor::of::<AddMilestone>(),
        Descriptor::of::<DeleteMilestone>(),
        Descriptor::of::<SetFounderStory>(),
        Descriptor::of::<AnswerInterview>(),
        Descriptor::of::<ChooseFreeListing>(),
    ]
}

/// The caller's listing, or 404 — also for other people's, so ids cannot be probed.
async fn own_listing(ctx: &Ctx, raw_id: i64) -> OpResult<Listing> {
    let user = ctx.principal()?.user_id;
    let id = ListingId::parse(raw_id)?;
    ctx.app.store.owned_listing(user, id).await?.ok_or(OpError::NotFound("listing"))
}

/// Looks at the homepage of one of the caller's listings for our badge now, as the queued looks do
/// (a find schedules the launch), and answers the listing as get_my_listing does. For a listing
/// awaiting its badge only (409 otherwise), and at most [`BADGE_LOOKS_PER_HOUR`] a listing an hour
/// (429), so the button cannot make us read someone's homepage in a loop.
pub async fn check_badge_now(ctx: &Ctx, listing_id: i64) -> OpResult<MyListingOut> {
    let l = own_listing(ctx, listing_id).await?;
    if l.lifecycle.status() != ListingStatus::AwaitingBadge {
        return Err(OpError::Conflict {
            code: "not_awaiting_badge",
            message: format!("the listing is {}, not waiting for its badge", l.lifecycle.status().as_str()),
        });
    }
    crate::quotas::take(
        &ctx.app,
        &[crate::quotas::Cap {
            code: "badge_look_quota",
            purpose: "badge-look",
            subject: l.id.get().to_string(),
            limit: BADGE_LOOKS_PER_HOUR,
            window: chrono::Duration::hours(1),
            what: "looks for the badge of this listing this hour",
        }],
    )
    .await?;
    crate::lifecycle::look_for_badge(&ctx.app, l.id, false)
        .await
        .map_err(|e| OpError::Repo(domain::ports::RepoError::Unexpected(e.into())))?;
    let l = own_listing(ctx, listing_id).await?;
    my_listing_out(ctx, l).await
}

/// Looks for the badge a maker may ask for, per listing and hour.
pub const BADGE_LOOKS_PER_HOUR: i64 = 10;

/// A refused lifecycle move, as a 409 naming the current status.
fn conflict(e: domain::listing::TransitionError) -> OpError {
    OpError::Conflict { code: "invalid_status", message: e.to_string() }
}

// ---- outputs ----

#[derive(Debug, Serialize, ToSchema)]
pub struct UnlockedOut {
    pub story: bool,
    pub milestones: bool,
    pub media: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BadgeCheckOut {
    pub checked_at: String,
    /// What was found on the homepage (a link to the listing, or our badge image); null when nothing.
    pub found: Option<String>,
    /// What the check saw, or why it could not look.
    pub detail: String,
}

/// A free launch's week and place in it.
#[derive(Debug, Serialize, ToSchema)]
pub struct FreeLaunchOut {
    /// Monday of the launch week.
    pub week: String,
    /// Its place in the week's free launches, ordered by when each listing was listed (1 is first);
    /// the same before choosing the free launch and after.
    pub position: i64,
    /// The most free launches a week holds.
    pub capacity: i64,
}

/// What the free plan asks of the maker: our badge on their homepage.
#[derive(Debug, Serialize, ToSchema)]
pub struct BadgeRequirementOut {
    /// Paste this on the homepage (a link to the listing's page wrapping our badge).
    pub embed_html: String,
    /// The listing's page the link must point to.
    pub link_url: String,
    pub image_url: String,
    /// The homepage we look at.
    pub homepage: String,
    /// The last look, or null before the first.
    pub last_check: Option<BadgeCheckOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MyListingOut {
    pub listing_id: i64,
    pub slug: String,
    /// draft (saved, not published), awaiting_badge, scheduled, live, removed, or hidden (taken off
    /// every public read by the site team; `hidden` says why).
    pub status: String,
    /// none, free or paid.
    pub plan: String,
    /// Monday of the launch week.
    pub launch_week: Option<String>,
    /// While the site team hides the listing: why and since when. Null otherwise.
    pub hidden: Option<HiddenOut>,
    /// Sections shown publicly (a paid plan unlocks all).
    pub unlocked: UnlockedOut,
    /// Whether get_listing shows it (live).
    pub public: bool,
    /// What to do next, for a person.
    pub next_step: String,
    /// On the free plan until the launch: the badge to place and the last check.
    pub badge: Option<BadgeRequirementOut>,
    /// The free launch: for a saved listing, where choose_free_listing would put it now; on the free
    /// plan before it goes live, where it is. Null otherwise (and for a saved listing when every week of
    /// the window is full).
    pub free_launch: Option<FreeLaunchOut>,
    /// This site's headline, summary and SEO texts (edited with update_my_listing).
    pub headline: String,
    pub summary: String,
    pub seo_title: String,
    pub seo_description: String,
    /// Everything public, with every section the owner has written (shown publicly only where
    /// unlocked).
    pub profile: ListingProfileOut,
}

/// Why the site team hid a listing.
#[derive(Debug, Serialize, ToSchema)]
pub struct HiddenOut {
    pub reason: String,
    /// RFC 3339.
    pub hidden_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MyListingSummaryOut {
    pub listing_id: i64,
    pub slug: String,
    pub name: String,
    pub status: String,
    pub plan: String,
    pub launch_week: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MyListingPage {
    pub items: Vec<MyListingSummaryOut>,
    pub pagination: Pagination,
}

fn next_step(l: &Listing) -> String {
    let week = l.lifecycle.launch_week().map(|w| w.monday().to_string()).unwrap_or_default();
    match l.lifecycle.status() {
        ListingStatus::Draft => {
            "Saved, not published. Choose the free plan (choose_free_listing) or a paid launch (create_checkout with 'launch')."
                .into()
        }
        ListingStatus::AwaitingBadge => format!(
            "Free launch in the week of {week}, once our badge is on your homepage: paste badge.embed_html there; \
             we check it a few times a day."
        ),
        ListingStatus::Scheduled => format!("Scheduled: goes live on Monday {week}."),
        ListingStatus::Live => "Live: people can see and vote for it.".into(),
        ListingStatus::Removed => "Removed from the directory.".into(),
        ListingStatus::Hidden => "Hidden by the site team (see hidden.reason): it shows nowhere public. Nothing is \
            lost; reply to the email we sent if you think it is a mistake."
            .into(),
    }
}

async fn my_listing_out(ctx: &Ctx, l: Listing) -> OpResult<MyListingOut> {
    let badge = if l.lifecycle.status() == ListingStatus::AwaitingBadge {
        let last = ctx.app.store.badge_check(l.id).await?;
        let (shape, mode, size) = (BadgeShape::default(), BadgeMode::default(), BadgeSize::default());
        let image = crate::badges::image_url(&ctx.public_url, l.slug.as_str(), BadgeKind::ListedOn, shape, mode, size);
        let page = domain::own::listing_page(&ctx.public_url, l.slug.as_str());
        let alt = format!("{} — {}", l.profile.name, BadgeKind::ListedOn.title());
        Some(BadgeRequirementOut {
            embed_html: crate::badges::embed_html(&page, &image, &alt, crate::badges::dimensions(shape, size)),
            link_url: page,
            image_url: image,
            homepage: l.profile.url.clone(),
            last_check: last.map(|c| BadgeCheckOut {
                checked_at: c.checked_at.to_rfc3339(),
                found: c.found,
                detail: c.detail,
            }),
        })
    } else {
        None
    };
    let free_launch = free_launch_of(ctx, &l).await?;
    let hidden = match l.lifecycle.status() {
        ListingStatus::Hidden => ctx
            .app
            .store
            .listing_hold(l.id)
            .await?
            .map(|h| HiddenOut { reason: h.reason, hidden_at: h.at.to_rfc3339() }),
        _ => None,
    };
    let everything = UnlockedSections { story: true, milestones: true, media: true };
    Ok(MyListingOut {
        free_launch,
        listing_id: l.id.get(),
        slug: l.slug.to_string(),
        status: l.lifecycle.status().as_str().into(),
        plan: l.lifecycle.plan().as_str().into(),
        launch_week: l.lifecycle.launch_week().map(|w| w.monday().to_string()),
        hidden,
        unlocked: {
            let u = l.unlocked.effective(l.lifecycle.plan());
            UnlockedOut { story: u.story, milestones: u.milestones, media: u.media }
        },
        public: l.lifecycle.is_public(),
        next_step: next_step(&l),
        badge,
        headline: l.profile.headline.clone(),
        summary: l.profile.summary.clone(),
        seo_title: l.profile.seo_title.clone(),
        seo_description: l.profile.seo_description.clone(),
        profile: {
            let details = ctx.app.store.listing_details(l.id, true).await?;
            profile_out(ctx, l, details, everything).await?
        },
    })
}

// ---- list_my_listings ----

#[derive(Debug)]
pub struct ListMyListings;

#[async_trait]
impl Operation for ListMyListings {
    const ID: &'static str = "list_my_listings";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/me/listings";
    const SCOPE: Option<Scope> = Some(Scope::AccountRead);
    const SUMMARY: &'static str = "Every listing the caller owns, in any status";
    const DESCRIPTION: &'static str = "Lists the listings the caller owns or co-owns, newest first, whatever their \
        status (draft = saved not published, awaiting_badge, scheduled, live, hidden by the site team), with plan \
        and launch week. \
        Call get_my_listing for one in full. Read-only.";
    type Input = PageInput;
    type Output = MyListingPage;

    async fn run(ctx: &Ctx, i: PageInput) -> OpResult<MyListingPage> {
        let user = ctx.principal()?.user_id;
        let page = PageRequest::parse(i.page, i.per_page)?;
        let listings = ctx.app.store.owned_listings(user, page).await?;
        Ok(MyListingPage {
            pagination: Pagination::from(&listings),
            items: listings
                .items
                .into_iter()
                .map(|l| MyListingSummaryOut {
                    listing_id: l.id.get(),
                    slug: l.slug.to_string(),
                    name: l.profile.name,
                    status: l.lifecycle.status().as_str().into(),
                    plan: l.lifecycle.plan().as_str().into(),
                    launch_week: l.lifecycle.launch_week().map(|w| w.monday().to_string()),
                })
                .collect(),
        })
    }
}

// ---- get_my_listing ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListingIdInput {
    #[schema(minimum = 1)]
    pub listing_id: i64,
}

#[derive(Debug)]
pub struct GetMyListing;

#[async_trait]
impl Operation for GetMyListing {
    const ID: &'static str = "get_my_listing";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/me/listings/{listing_id}";
    const SCOPE: Option<Scope> = Some(Scope::AccountRead);
    const SUMMARY: &'static str = "One of the caller's listings: status, plan, launch week, everything public";
    const DESCRIPTION: &'static str = "Returns the caller's listing with status, plan, launch week, unlocked \
        sections, what to do next, and on the free plan the badge to place on the homepage with the last check \
        (when, what was found). A listing the site team hid has status hidden and says why in hidden (it shows \
        nowhere public until they restore it). 404 when the listing is unknown or not the caller's. Read-only.";
    type Input = ListingIdInput;
    type Output = MyListingOut;

    async fn run(ctx: &Ctx, i: ListingIdInput) -> OpResult<MyListingOut> {
        let l = own_listing(ctx, i.listing_id).await?;
        my_listing_out(ctx, l).await
    }
}

// ---- update_my_listing ----

macro_rules! own_fields {
    ($( $name:ident : text $max:path ),* ; $( $lname:ident : list ),*) => {
        /// The own-listing editable fields; null clears a field. No other keys are allowed.
        #[derive(Debug, Default, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct OwnFieldsInput {
            $(
                #[serde(default, deserialize_with = "nullable")]
                #[schema(value_type = Option<String>)]
                pub $name: Option<Option<String>>,
            )*
            $(
                #[serde(default, deserialize_with = "nullable")]
                #[schema(inline, value_type = Option<Vec<Item200>>)]
                pub $lname: Option<Option<Vec<String>>>,
            )*
            /// 1800 to 2100, or null.
            #[serde(default, deserialize_with = "nullable")]
            #[schema(value_type = Option<i64>)]
            pub founded_year: Option<Option<i64>>,
        }

        /// Each text field's bound and the list fields, from the domain's table of own-listing limits.
        const OWN_TEXT_BOUNDS: &[(&str, usize)] = &[$( (stringify!($name), $max) ),*];
        const OWN_LISTS: &[&str] = &[$( stringify!($lname) ),*];

        impl OwnFieldsInput {
            fn into_edit(self, socials: Option<Vec<(String, String)>>, faqs: Option<Vec<(String, String)>>) -> OwnEdit {
                OwnEdit { $( $name: self.$name, )* $( $lname: self.$lname, )* founded_year: self.founded_year, socials, faqs }
            }
        }
    };
}

own_fields! {
    tagline: text limits::TAGLINE,
    short_description: text limits::SHORT_DESCRIPTION,
    description: text limits::DESCRIPTION,
    pricing_model: text limits::PRICING_MODEL,
    pricing_summary: text limits::PRICING_SUMMARY,
    country: text limits::COUNTRY,
    city: text limits::CITY,
    demo_video_url: text limits::DEMO_VIDEO_URL,
    contact_email: text limits::CONTACT_EMAIL,
    headline: text limits::HEADLINE,
    summary: text limits::SUMMARY,
    seo_title: text limits::SEO_TITLE,
    seo_description: text limits::SEO_DESCRIPTION;
    features: list,
    usps: list,
    keywords: list
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMyListingInput {
    #[schema(minimum = 1)]
    pub listing_id: i64,
    #[schema(inline)]
    pub fields: Option<OwnFieldsInput>,
    /// Replaces every social link: platform (linkedin, x, facebook, instagram, tiktok, youtube, threads,
    /// pinterest, github, reddit, producthunt, medium, website, custom) → link, each at most 500.
    #[schema(inline, value_type = Option<BTreeMap<String, Link500>>)]
    pub socials: Option<BTreeMap<String, String>>,
    /// Replaces every FAQ.
    #[schema(inline)]
    pub faqs: Option<Vec<FaqInput>>,
}

/// The own-editable fields of a profile, as the version history keeps them.
fn snapshot(p: &ListingProfile) -> serde_json::Value {
    json!({
        "tagline": p.tagline, "short_description": p.short_description, "description": p.description,
        "pricing_model": p.pricing_model, "pricing_summary": p.pricing_summary,
        "country": p.country.as_ref().map(|c| c.as_str().to_owned()), "city": p.city,
        "founded_year": p.founded_year.map(|y| y.get()), "demo_video_url": p.demo_video_url,
        "contact_email": p.contact_email, "features": p.features, "usps": p.usps, "keywords": p.keywords,
        "headline": p.headline, "summary": p.summary, "seo_title": p.seo_title,
        "seo_description": p.seo_description,
        "socials": p.socials.iter().collect::<BTreeMap<_, _>>(),
        "faqs": p.faqs.iter().map(|f| json!({"question": f.question.as_str(), "answer": f.answer.as_str()})).collect::<Vec<_>>(),
    })
}

#[derive(Debug)]
pub struct UpdateMyListing;

#[async_trait]
impl Operation for UpdateMyListing {
    const ID: &'static str = "update_my_listing";
    const METHOD: Method = Method::Patch;
    const PATH: &'static str = "/me/listings/{listing_id}";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Edit one of the caller's listings; edits publish at once";
    const DESCRIPTION: &'static str = "Changes the listing's editable fields (tagline, descriptions, pricing, \
        country, city, founded_year, demo video, contact email, features, usps, keywords, headline, summary, SEO \
        texts; null clears one), and replaces socials or faqs when sent. Every bound is checked and each offending \
        field named (400); nothing changes unless all pass. The edit is public at once and kept in the version \
        history with a before/after copy the site team can see. 404 when the listing is not the caller's.";
    type Input = UpdateMyListingInput;

    fn refine_input_schema(schema: &mut serde_json::Value) {
        use crate::refine::set;
        use serde_json::json;
        crate::refine::socials(schema, &["socials"]);
        crate::refine::max_lengths(schema, &["fields"], OWN_TEXT_BOUNDS);
        FaqInput::bounds(schema, &["faqs", "[]"]);
        for list in OWN_LISTS {
            set(schema, &["fields", list], "maxItems", json!(limits::LIST_ITEMS));
            set(schema, &["fields", list, "[]"], "maxLength", json!(limits::LIST_ITEM));
        }
        let year = domain::listing::FoundedYear::MIN..=domain::listing::FoundedYear::MAX;
        set(schema, &["fields", "founded_year"], "minimum", json!(year.start()));
        set(schema, &["fields", "founded_year"], "maximum", json!(year.end()));
        set(schema, &["faqs"], "maxItems", json!(domain::social::Faq::MAX_ITEMS));
        // Texts are trimmed; an empty one clears the field. These say what else each field takes.
        set(schema, &["fields", "demo_video_url"], "pattern", json!("^$|^https?://"));
        set(schema, &["fields", "country"], "pattern", json!("^(?:[A-Za-z]{2})?$"));
        set(schema, &["fields", "contact_email"], "anyOf", json!([{"maxLength": 0}, {"format": "email"}]));
        for list in ["features", "usps", "keywords"] {
            set(schema, &["fields", list, "[]"], "pattern", json!(domain::text::NOT_BLANK_PATTERN));
        }
    }
    type Output = MyListingOut;

    async fn run(ctx: &Ctx, i: UpdateMyListingInput) -> OpResult<MyListingOut> {
        let user = ctx.principal()?.user_id;
        let l = own_listing(ctx, i.listing_id).await?;
        if l.lifecycle.status() == ListingStatus::Removed {
            return Err(conflict(domain::listing::TransitionError {
                machine: "listing",
                action: "edit",
                current: ListingStatus::Removed.as_str(),
            }));
        }
        let faqs = i.faqs.map(|fs| fs.into_iter().map(|f| (f.question, f.answer)).collect());
        let edit = i.fields.unwrap_or_default().into_edit(i.socials.map(|s| s.into_iter().collect()), faqs);
        if !edit.is_empty() {
            let after = edit.apply(&l.profile)?;
            let (before_json, after_json) = (snapshot(&l.profile), snapshot(&after));
            if before_json != after_json {
                ctx.app
                    .store
                    .save_profile_edit(
                        l.id,
                        user,
                        &after,
                        &before_json.to_string(),
                        &after_json.to_string(),
                        ctx.app.now(),
                    )
                    .await?;
            }
        }
        let l = own_listing(ctx, i.listing_id).await?;
        my_listing_out(ctx, l).await
    }
}

// ---- post_listing_update ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PostListingUpdateInput {
    #[schema(minimum = 1)]
    pub listing_id: i64,
    /// Not blank.
    pub title: String,
    /// Plain text, not blank.
    pub body: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ListingUpdateOut {
    pub id: i64,
    pub listing_id: i64,
    pub title: String,
    pub body: String,
    pub posted_at: String,
    /// Followers who will be told by email.
    pub followers_notified: u64,
}

#[derive(Debug)]
pub struct PostListingUpdate;

#[async_trait]
impl Operation for PostListingUpdate {
    const ID: &'static str = "post_listing_update";
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/me/listings/{listing_id}/updates";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const STATUS: u16 = 201;
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Post a \"what's new\" update on one of the caller's listings";
    const DESCRIPTION: &'static str = "Posts an update (title up to 200, plain-text body up to 5000). It shows in \
        the listing's latest updates and the latest-updates feed, and every follower of the listing is told by \
        email. At most 3 a day per listing (429 with Retry-After past it). 404 when the listing is not the caller's.";
    fn refine_input_schema(schema: &mut serde_json::Value) {
        crate::refine::text::<domain::listing::UpdateTitle>(schema, &["title"]);
        crate::refine::text::<domain::listing::UpdateBody>(schema, &["body"]);
    }
    type Input = PostListingUpdateInput;
    type Output = ListingUpdateOut;

    async fn run(ctx: &Ctx, i: PostListingUpdateInput) -> OpResult<ListingUpdateOut> {
        let mut errs = domain::ValidationErrors::default();
        let title = errs.take(domain::listing::UpdateTitle::parse(i.title.trim()));
        let body = errs.take(domain::listing::UpdateBody::parse(i.body.trim()));
        errs.into_result()?;
        let (Some(title), Some(body)) = (title, body) else { return Err(OpError::Invalid(Default::default())) };
        let l = own_listing(ctx, i.listing_id).await?;
        if l.lifecycle.status() == ListingStatus::Hidden {
            return Err(OpError::Conflict {
                code: "listing_hidden",
                message: "the site team hid this listing (see get_my_listing); its updates are neither shown nor sent \
                          to followers until they restore it"
                    .into(),
            });
        }
        // Followers asked for updates, but not for a flood of them.
        let user = ctx.principal()?.user_id;
        crate::quotas::take(
            &ctx.app,
            &[
                crate::quotas::account(user),
                crate::quotas::Cap {
                    code: "mail_quota",
                    purpose: "updates-listing",
                    subject: l.id.get().to_string(),
                    limit: domain::throttle::mail::UPDATES_PER_LISTING_PER_DAY,
                    window: domain::throttle::mail::day(),
                    what: "updates posted for this listing today",
                },
            ],
        )
        .await?;
        let update = ListingUpdate { title: title.into_inner(), body: body.into_inner(), posted_at: ctx.app.now() };
        let id = ctx.app.store.post_update(l.id, &update).await?;
        let followers = ctx.app.store.followers(l.id).await?.len() as u64;
        if followers > 0 {
            let job = worker::JobSpec::NotifyFollowers {
                listing: l.id.get(),
                title: update.title.clone(),
                body: update.body.clone(),
            };
            worker::enqueue(&ctx.app, &job).await?;
        }
        Ok(ListingUpdateOut {
            id,
            listing_id: l.id.get(),
            title: update.title,
            body: update.body,
            posted_at: update.posted_at.to_rfc3339(),
            followers_notified: followers,
        })
    }
}

// ---- add_milestone / delete_milestone ----

milestone_input!(
    /// The listing and the milestone.
    AddMilestoneInput,
    #[schema(minimum = 1)]
    listing_id: i64
);

#[derive(Debug)]
pub struct AddMilestone;

#[async_trait]
impl Operation for AddMilestone {
    const ID: &'static str = "add_milestone";
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/me/listings/{listing_id}/milestones";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const STATUS: u16 = 201;
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Add a milestone to one of the caller's listings";
    const DESCRIPTION: &'static str = "Adds a milestone (date YYYY-MM-DD and title required; description up to \
        2000; url an https link up to 500, left out for none). Milestones show publicly on paid listings or where the section is \
        unlocked; the owner always sees them in get_my_listing. At most 50 per listing (409 past it). 404 when \
        the listing is not the caller's.";
    fn refine_input_schema(schema: &mut serde_json::Value) {
        AddMilestoneInput::bounds(schema, &[]);
    }
    type Input = AddMilestoneInput;
    type Output = MilestoneOut;

    async fn run(ctx: &Ctx, i: AddMilestoneInput) -> OpResult<MilestoneOut> {
        let listing_id = i.listing_id;
        let m = i.parse()?;
        let l = own_listing(ctx, listing_id).await?;
        let Some(id) = ctx.app.store.add_milestone(l.id, &m, limits::MILESTONES).await? else {
            return Err(OpError::Conflict {
                code: "too_many_milestones",
                message: format!(
                    "the listing has {} milestones, the most it may hold; delete one first",
                    limits::MILESTONES
                ),
            });
        };
        Ok(MilestoneOut {
            id: id.get(),
            date: m.date.to_string(),
            title: m.title.into_inner(),
            description: m.description.into_inner(),
            url: m.url,
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteMilestoneInput {
    #[schema(minimum = 1)]
    pub listing_id: i64,
    #[schema(minimum = 1)]
    pub milestone_id: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedOut {
    pub deleted: bool,
    pub milestone_id: i64,
}

#[derive(Debug)]
pub struct DeleteMilestone;

#[async_trait]
impl Operation for DeleteMilestone {
    const ID: &'static str = "delete_milestone";
    const METHOD: Method = Method::Delete;
    const PATH: &'static str = "/me/listings/{listing_id}/milestones/{milestone_id}";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Remove one milestone from one of the caller's listings";
    const DESCRIPTION: &'static str = "Deletes the milestone. 404 when the listing is not the caller's or has no \
        such milestone.";
    type Input = DeleteMilestoneInput;
    type Output = DeletedOut;

    async fn run(ctx: &Ctx, i: DeleteMilestoneInput) -> OpResult<DeletedOut> {
        let mid = MilestoneId::parse(i.milestone_id)?;
        let l = own_listing(ctx, i.listing_id).await?;
        if !ctx.app.store.delete_milestone(l.id, mid).await? {
            return Err(OpError::NotFound("milestone"));
        }
        Ok(DeletedOut { deleted: true, milestone_id: mid.get() })
    }
}

// ---- set_founder_story ----

story_input!(
    /// The listing and its story sections: title at most 200 characters, every other section at most 8000.
    SetFounderStoryInput,
    Story::MAX_LISTING_TITLE,
    #[schema(minimum = 1)]
    listing_id: i64
);

#[derive(Debug, Serialize, ToSchema)]
pub struct StoryOut {
    pub listing_id: i64,
    /// Section name → text, in display order.
    pub sections: BTreeMap<String, String>,
    /// Whether the story shows publicly (paid plan or unlocked); it is published with the listing.
    pub public: bool,
}

#[derive(Debug)]
pub struct SetFounderStory;

#[async_trait]
impl Operation for SetFounderStory {
    const ID: &'static str = "set_founder_story";
    const METHOD: Method = Method::Put;
    const PATH: &'static str = "/me/listings/{listing_id}/story";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Save the founder story of one of the caller's listings";
    const DESCRIPTION: &'static str = "Replaces the story with the sections sent (title up to 200; story, \
        why_started, problem, journey, challenges, achievements, lessons, whats_next up to 8000 each; a section \
        not sent is empty). Published with the listing where the story section is unlocked. 404 when the \
        listing is not the caller's.";
    fn refine_input_schema(schema: &mut serde_json::Value) {
        SetFounderStoryInput::bounds(schema, &[]);
    }
    type Input = SetFounderStoryInput;
    type Output = StoryOut;

    async fn run(ctx: &Ctx, i: SetFounderStoryInput) -> OpResult<StoryOut> {
        let listing_id = i.listing_id;
        let story = Story::parse("story", i.sections(), Story::MAX_LISTING_TITLE)
            .map_err(|e| ValidationError::new(e.field.trim_start_matches("story.").to_owned(), e.problem))?;
        let l = own_listing(ctx, listing_id).await?;
        ctx.app.store.set_story(l.id, &story, ctx.app.now()).await?;
        Ok(StoryOut {
            listing_id: l.id.get(),
            sections: story.sections().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
            public: l.unlocked.effective(l.lifecycle.plan()).story,
        })
    }
}

// ---- answer_interview ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerIn {
    #[schema(minimum = 1)]
    pub question_id: i64,
    pub answer: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerInterviewInput {
    /// One answer per question id from list_interview_questions.
    #[schema(inline)]
    pub answers: Vec<AnswerIn>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InterviewSavedOut {
    /// How many answers were saved (a question answered again replaces the earlier answer).
    pub saved: usize,
    pub question_ids: Vec<i64>,
}

#[derive(Debug)]
pub struct AnswerInterview;

#[async_trait]
impl Operation for AnswerInterview {
    const ID: &'static str = "answer_interview";
    const METHOD: Method = Method::Put;
    const PATH: &'static str = "/me/interview";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Save the caller's founder interview answers";
    const DESCRIPTION: &'static str = "Saves up to 30 answers a call ({question_id, answer up to 4000}); question \
        ids come from list_interview_questions and an unknown one is refused by its position. Answering a \
        question again replaces the earlier answer.";
    type Input = AnswerInterviewInput;

    fn refine_input_schema(schema: &mut serde_json::Value) {
        crate::refine::mark(schema, &["answers", "[]", "question_id"], "interview-question");
        crate::refine::set(schema, &["answers"], "maxItems", domain::interview::MAX_ANSWERS_PER_CALL.into());
        crate::refine::text::<InterviewAnswerText>(schema, &["answers", "[]", "answer"]);
    }
    type Output = InterviewSavedOut;

    async fn run(ctx: &Ctx, i: AnswerInterviewInput) -> OpResult<InterviewSavedOut> {
        let user = ctx.principal()?.user_id;
        domain::interview::check_answer_count(i.answers.len())?;
        let known: Vec<i64> = ctx.app.store.list_questions().await?.iter().map(|q| q.id.get()).collect();
        let mut errs = domain::ValidationErrors::default();
        let mut answers = Vec::new();
        for (n, a) in i.answers.into_iter().enumerate() {
            let field = |f: &str| format!("answers[{n}].{f}");
            let qid = errs.take(QuestionId::parse(a.question_id).map_err(|e| e.named(&field("question_id"))));
            let qid = qid.and_then(|q| {
                if known.contains(&q.get()) {
                    Some(q)
                } else {
                    errs.push(ValidationError::new(field("question_id"), "is not an interview question id"));
                    None
                }
            });
            let text = errs.take(InterviewAnswerText::parse(a.answer).map_err(|e| e.named(&field("answer"))));
            if let (Some(question_id), Some(answer)) = (qid, text) {
                answers.push(InterviewAnswer { question_id, answer });
            }
        }
        errs.into_result()?;
        ctx.app.store.save_interview_answers(user, &answers, ctx.app.now()).await?;
        Ok(InterviewSavedOut {
            saved: answers.len(),
            question_ids: answers.iter().map(|a| a.question_id.get()).collect(),
        })
    }
}

// ---- choose_free_listing ----

#[derive(Debug)]
pub struct ChooseFreeListing;

#[async_trait]
impl Operation for ChooseFreeListing {
    const ID: &'static str = "choose_free_listing";
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/me/listings/{listing_id}/free";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Queue a saved listing for a free launch 6–8 weeks out";
    const DESCRIPTION: &'static str = "Puts a saved (submitted, not published) listing on the free plan: it gets \
        the launch week 6 to 8 weeks out with the fewest free launches (never a full one) and status \
        awaiting_badge. It is scheduled once our badge (badge.embed_html in the answer) is found on its \
        homepage — we check a few times a day — and goes live when its week begins. 409 naming the status when \
        the listing is not a saved one, or when every week of the window is full.";
    type Input = ListingIdInput;
    type Output = MyListingOut;

    async fn run(ctx: &Ctx, i: ListingIdInput) -> OpResult<MyListingOut> {
        use domain::ports::QueueMove;
        let l = own_listing(ctx, i.listing_id).await?;
        let now = ctx.app.now();
        let settings = site_settings(&ctx.app).await?;
        let capacity = settings.free_plan_weekly_capacity;
        // The week is chosen on counts read before; the store checks the capacity again as it moves
        // the listing in (listings queued at once would otherwise overfill a week). A week found full
        // there stays full, so choosing again on fresh counts ends within the window's weeks.
        let mut moved = false;
        for _ in 0..=domain::own::free_window(now, &settings).len() {
            let week = free_week(ctx, now).await?;
            let mut next = l.lifecycle;
            next.choose_free(week).map_err(conflict)?;
            match ctx.app.store.move_lifecycle_within(l.id, &l.lifecycle, &next, now, capacity).await? {
                QueueMove::Moved => {
                    moved = true;
                    break;
                }
                QueueMove::WeekFull => continue,
                QueueMove::Stale => {
                    // Another request moved it first: report the status it has now.
                    let current = own_listing(ctx, i.listing_id).await?;
                    return Err(conflict(domain::listing::TransitionError {
                        machine: "listing",
                        action: "choose the free plan",
                        current: current.lifecycle.status().as_str(),
                    }));
                }
            }
        }
        if !moved {
            return Err(free_queue_full());
        }
        worker::enqueue(&ctx.app, &worker::JobSpec::BadgeCheck { listing: l.id.get() }).await?;
        let l = own_listing(ctx, i.listing_id).await?;
        my_listing_out(ctx, l).await
    }
}

/// Where the free plan puts (or has put) `l`: see [`FreeLaunchOut`].
async fn free_launch_of(ctx: &Ctx, l: &Listing) -> OpResult<Option<FreeLaunchOut>> {
    use domain::listing::Plan;
    let lc = &l.lifecycle;
    let week = match (lc.status(), lc.plan(), lc.launch_week()) {
        (ListingStatus::Draft, _, _) => free_week_for(&ctx.app, ctx.app.now()).await?,
        (ListingStatus::AwaitingBadge | ListingStatus::Scheduled, Plan::Free, Some(w)) => Some(w),
        _ => None,
    };
    let Some(week) = week else { return Ok(None) };
    let ahead = ctx.app.store.launches_ahead(Plan::Free, week, l.id).await?;
    let capacity = site_settings(&ctx.app).await?.free_plan_weekly_capacity;
    Ok(Some(FreeLaunchOut { week: week.monday().to_string(), position: ahead + 1, capacity }))
}

/// The free week for a listing queued now (see [`domain::own::free_launch_week`]); 409 when full.
pub(crate) async fn free_week(ctx: &Ctx, now: chrono::DateTime<chrono::Utc>) -> OpResult<domain::week::LaunchWeek> {
    free_week_for(&ctx.app, now).await?.ok_or_else(free_queue_full)
}

fn free_queue_full() -> OpError {
    OpError::Conflict {
        code: "free_queue_full",
        message: "every free launch week 6 to 8 weeks out is full; try again next week or choose a paid launch".into(),
    }
}

/// The free week for a listing queued at `now`, or `None` when every week of the window is full.
pub(crate) async fn free_week_for(
    app: &crate::App,
    now: chrono::DateTime<chrono::Utc>,
) -> OpResult<Option<domain::week::LaunchWeek>> {
    let settings = site_settings(app).await?;
    let window = domain::own::free_window(now, &settings);
    let counts = app.store.launches_in(domain::listing::Plan::Free, &window).await?;
    Ok(domain::own::free_launch_week(now, &settings, |w| counts.iter().find(|(cw, _)| *cw == w).map_or(0, |(_, n)| *n)))
}

/// The site settings as stored now (defaults for anything missing).
pub(crate) async fn site_settings(app: &crate::App) -> OpResult<domain::settings::SiteSettings> {
    let pairs = app.store.all_settings().await?;
    Ok(domain::settings::SiteSettings::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))))
}
