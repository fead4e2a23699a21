//! A ready draft as a listing: the draft is a working document (its fields take the draft table's
//! bounds); the listing takes the own-listing rules, checked here so that submit_draft — and every
//! later update_draft of a submitted draft — answers 400 naming the field instead of saving half.

use crate::{OpError, OpResult};
use chrono::{DateTime, Utc};
use domain::ValidationErrors;
use domain::category::{Category, ListingCategories};
use domain::draft::{Draft, DraftField, FieldValue};
use domain::listing::{CountryCode, FoundedYear, Lifecycle, ListingProfile, NewListing, UnlockedSections};
use domain::ports::RepoError;
use domain::sections::Story;
use domain::slug::Slug;
use domain::text::check_max;

fn text(d: &Draft, f: DraftField) -> String {
    match &d.profile.field(f).value {
        Some(FieldValue::Text(s)) => s.trim().to_owned(),
        _ => String::new(),
    }
}

fn list(d: &Draft, f: DraftField) -> Vec<String> {
    match &d.profile.field(f).value {
        Some(FieldValue::List(l)) => l.iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect(),
        _ => vec![],
    }
}

/// The host of a URL without `www.`.
pub(crate) fn domain_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.starts_with('[') { host } else { host.split(':').next().unwrap_or(host) };
    host.trim_start_matches("www.").to_ascii_lowercase()
}

pub(crate) fn to_new_listing(
    d: &Draft,
    categories: &[Category],
    now: DateTime<Utc>,
) -> Result<NewListing, ValidationErrors> {
    let mut errs = ValidationErrors::default();
    let name = text(d, DraftField::Name);
    if name.is_empty() {
        errs.push(domain::ValidationError::new("fields.name", "a listing needs a name; set fields.name first"));
    }
    errs.take(check_max("fields.name", &name, 200));
    let mut bounded = |f: DraftField, max: usize| {
        let v = text(d, f);
        errs.take(check_max(&format!("fields.{}", f.as_str()), &v, max).map_err(|e| {
            domain::ValidationError::new(e.field, format!("{}; a listing allows at most {max}", e.problem))
        }));
        v
    };
    let tagline = bounded(DraftField::Tagline, 200);
    let short_description = bounded(DraftField::ShortDescription, 300);
    let description = bounded(DraftField::Description, 20000);
    let pricing_model = bounded(DraftField::PricingModel, 40);
    let pricing_summary = bounded(DraftField::PricingSummary, 300);
    let city = bounded(DraftField::City, 120);
    let contact_email = bounded(DraftField::ContactEmail, 254);
    let demo_video_url = bounded(DraftField::DemoVideoUrl, 500);
    let logo_url = bounded(DraftField::LogoUrl, 500);
    let country = match text(d, DraftField::Country) {
        c if c.is_empty() => None,
        c => errs.take(CountryCode::parse_assigned(&c).map_err(|e| e.named("fields.country"))),
    };
    let founded_year = match text(d, DraftField::FoundedYear) {
        y if y.is_empty() => None,
        y => errs.take(
            y.parse::<i64>()
                .map_err(|_| domain::ValidationError::new("fields.founded_year", "must be a year such as 2019"))
                .and_then(|n| FoundedYear::parse(n).map_err(|e| e.named("fields.founded_year"))),
        ),
    };
    let stage = match text(d, DraftField::Stage) {
        s if s.is_empty() => None,
        s => Slug::slugify(&s),
    };
    let cats = list(d, DraftField::Categories);
    let primary = cats.first().and_then(|n| categories.iter().find(|c| c.name == *n));
    if !cats.is_empty() && primary.is_none() {
        errs.push(domain::ValidationError::new("fields.categories[0]", "is no longer a category"));
    }
    errs.into_result()?;
    let x = &d.extras;
    let slug = Slug::slugify(&name).or_else(|| Slug::parse("listing").ok()).ok_or_else(|| {
        ValidationErrors::from(domain::ValidationError::new("fields.name", "cannot be made into a web address"))
    })?;
    let mut profile = ListingProfile::named(name, d.url.clone(), domain_of(&d.url));
    profile.tagline = tagline;
    profile.short_description = short_description;
    profile.description = description;
    profile.stage = stage;
    profile.pricing_model = pricing_model;
    profile.pricing_summary = pricing_summary;
    profile.country = country;
    profile.city = city;
    profile.founded_year = founded_year;
    profile.contact_email = contact_email;
    profile.demo_video_url = demo_video_url;
    profile.logo_url = logo_url;
    profile.features = list(d, DraftField::Features);
    profile.usps = list(d, DraftField::Usps);
    profile.keywords = list(d, DraftField::Keywords);
    profile.tags = list(d, DraftField::Tags);
    profile.faqs = x.faqs.iter().map(|f| f.faq.clone()).collect();
    profile.socials = x.company_socials.clone();
    profile.seo_title = x.seo.title.clone();
    profile.seo_description = x.seo.meta.clone();
    profile.not_found_on_website = d.not_found_names();
    Ok(NewListing {
        slug,
        profile,
        lifecycle: Lifecycle::saved(),
        categories: primary.map(|c| ListingCategories::new(c.id)),
        unlocked: UnlockedSections::default(),
        featured: false,
        verified: false,
        domain_rating: None,
        revenue: None,
        created_at: now,
    })
}

/// Saves the draft's listing — creates it, or updates the one the draft has — when the draft's values
/// make a valid listing (else 400 naming the field). The one path for submit_draft, edits of a
/// submitted draft, and redrafts by the worker.
pub(crate) async fn save_listing(app: &crate::App, d: &Draft) -> OpResult<domain::ids::ListingId> {
    let cats = app.store.all_categories().await?;
    let new = to_new_listing(d, &cats, app.now())?;
    // The story's title is bounded tighter on a listing (200) than in a draft (8000).
    let story = Story::parse(
        "story",
        d.extras.story.sections().map(|(k, v)| (k.to_owned(), v.to_owned())),
        Story::MAX_LISTING_TITLE,
    )?;
    let id = match app.store.save_draft_listing(d, &new, app.now()).await {
        Ok(id) => id,
        Err(RepoError::Conflict(m)) => return Err(OpError::Conflict { code: "submit_conflict", message: m }),
        Err(e) => return Err(e.into()),
    };
    if d.listing_id.is_none() {
        // The first save carries the draft's story and milestones over; afterwards the listing's own
        // operations (set_founder_story, add/delete_milestone) own them.
        if !story.is_empty() {
            app.store.set_story(id, &story, app.now()).await?;
        }
        for m in d.extras.milestones.iter().take(domain::own::limits::MILESTONES) {
            app.store.add_milestone(id, m, domain::own::limits::MILESTONES).await?;
        }
    }
    Ok(id)
}

/// Load → change → save with the version read, retried when another writer (the worker, another
/// request) saved in between. `None` when the draft does not exist. `change` may refuse with an error,
/// which ends the attempt and is returned.
pub(crate) async fn update_draft<E: From<RepoError>>(
    app: &crate::App,
    id: domain::ids::DraftId,
    mut change: impl FnMut(&mut Draft) -> Result<(), E>,
) -> Result<Option<Draft>, E> {
    for _ in 0..16 {
        let Some(mut d) = app.store.get_draft(id).await? else { return Ok(None) };
        change(&mut d)?;
        if let Some(saved) = app.store.save_draft(&d, app.now()).await? {
            return Ok(Some(saved));
        }
    }
    Err(RepoError::Conflict("the draft kept changing while it was saved; try again".into()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_drop_www_ports_and_credentials() {
        assert_eq!(domain_of("https://www.Acme.example:8443/x?y"), "acme.example");
        assert_eq!(domain_of("http://127.0.0.1:9000/"), "127.0.0.1");
    }
}
