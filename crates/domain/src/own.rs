//! A maker's own listing after it was submitted: the fields they edit (update_my_listing), the week the
//! free plan gives them, and whether our badge is on their homepage.

use crate::listing::{CountryCode, FoundedYear, ListingProfile};
use crate::settings::SiteSettings;
use crate::social::{Faq, Socials};
use crate::text::{check_list, check_max};
use crate::user::Email;
use crate::week::LaunchWeek;
use crate::{ValidationError, ValidationErrors};
use chrono::{DateTime, Duration, Utc};

/// The bounds of the own-listing editable fields (spec "Own-listing editable fields").
pub mod limits {
    use crate::listing as l;
    pub const TAGLINE: usize = l::Tagline::MAX;
    pub const SHORT_DESCRIPTION: usize = l::ShortDescription::MAX;
    pub const DESCRIPTION: usize = l::Description::MAX;
    pub const PRICING_MODEL: usize = l::PricingModel::MAX;
    pub const PRICING_SUMMARY: usize = l::PricingSummary::MAX;
    pub const COUNTRY: usize = 2;
    pub const CITY: usize = l::City::MAX;
    pub const DEMO_VIDEO_URL: usize = l::DemoVideoUrl::MAX;
    pub const CONTACT_EMAIL: usize = l::ContactEmail::MAX;
    pub const LIST_ITEMS: usize = 20;
    pub const LIST_ITEM: usize = 200;
    pub const HEADLINE: usize = l::Headline::MAX;
    pub const SUMMARY: usize = l::Summary::MAX;
    pub const SEO_TITLE: usize = l::SeoTitle::MAX;
    pub const SEO_DESCRIPTION: usize = l::SeoDescription::MAX;
    /// Milestones one listing may hold (the draft's bound, kept for the listing).
    pub const MILESTONES: usize = 50;
}

/// One update_my_listing call. `None`: the field is left as it is. For text fields `Some(None)` (JSON
/// null) and `Some(Some(""))` both clear the field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OwnEdit {
    pub tagline: Option<Option<String>>,
    pub short_description: Option<Option<String>>,
    pub description: Option<Option<String>>,
    pub pricing_model: Option<Option<String>>,
    pub pricing_summary: Option<Option<String>>,
    pub country: Option<Option<String>>,
    pub city: Option<Option<String>>,
    pub founded_year: Option<Option<i64>>,
    pub demo_video_url: Option<Option<String>>,
    pub contact_email: Option<Option<String>>,
    pub features: Option<Option<Vec<String>>>,
    pub usps: Option<Option<Vec<String>>>,
    pub keywords: Option<Option<Vec<String>>>,
    pub headline: Option<Option<String>>,
    pub summary: Option<Option<String>>,
    pub seo_title: Option<Option<String>>,
    pub seo_description: Option<Option<String>>,
    /// Replaces every link (platform → URL).
    pub socials: Option<Vec<(String, String)>>,
    /// Replaces every FAQ (question, answer).
    pub faqs: Option<Vec<(String, String)>>,
}

fn text(
    errs: &mut ValidationErrors,
    field: &str,
    raw: Option<Option<String>>,
    max: usize,
    target: &mut String,
) -> Option<()> {
    let value = raw?.unwrap_or_default();
    let value = value.trim().to_owned();
    errs.take(check_max(&format!("fields.{field}"), &value, max))?;
    *target = value;
    Some(())
}

fn list(errs: &mut ValidationErrors, field: &str, raw: Option<Option<Vec<String>>>, target: &mut Vec<String>) {
    let Some(raw) = raw else { return };
    let items: Vec<String> = raw.unwrap_or_default().into_iter().map(|s| s.trim().to_owned()).collect();
    let name = format!("fields.{field}");
    if let Some(i) = items.iter().position(String::is_empty) {
        errs.push(ValidationError::new(format!("{name}[{i}]"), "must not be empty"));
        return;
    }
    if errs.take(check_list(&name, &items, limits::LIST_ITEMS, limits::LIST_ITEM)).is_some() {
        *target = items;
    }
}

/// An http(s) link, or empty.
fn check_link(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.is_empty() || value.starts_with("https://") || value.starts_with("http://") {
        Ok(())
    } else {
        Err(ValidationError::new(field, "must be an http or https link"))
    }
}

impl OwnEdit {
    /// Whether the call changes nothing at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Applies the edit to `profile`, or changes nothing and names every offending field.
    pub fn apply(self, profile: &ListingProfile) -> Result<ListingProfile, ValidationErrors> {
        let mut p = profile.clone();
        let mut errs = ValidationErrors::default();
        let e = &mut errs;
        text(e, "tagline", self.tagline, limits::TAGLINE, &mut p.tagline);
        text(e, "short_description", self.short_description, limits::SHORT_DESCRIPTION, &mut p.short_description);
        text(e, "description", self.description, limits::DESCRIPTION, &mut p.description);
        text(e, "pricing_model", self.pricing_model, limits::PRICING_MODEL, &mut p.pricing_model);
        text(e, "pricing_summary", self.pricing_summary, limits::PRICING_SUMMARY, &mut p.pricing_summary);
        text(e, "city", self.city, limits::CITY, &mut p.city);
        text(e, "headline", self.headline, limits::HEADLINE, &mut p.headline);
        text(e, "summary", self.summary, limits::SUMMARY, &mut p.summary);
        text(e, "seo_title", self.seo_title, limits::SEO_TITLE, &mut p.seo_title);
        text(e, "seo_description", self.seo_description, limits::SEO_DESCRIPTION, &mut p.seo_description);
        let mut video = p.demo_video_url.clone();
        if text(e, "demo_video_url", self.demo_video_url, limits::DEMO_VIDEO_URL, &mut video).is_some()
            && e.take(check_link("fields.demo_video_url", &video)).is_some()
        {
            p.demo_video_url = video;
        }
        let mut email = p.contact_email.clone();
        if text(e, "contact_email", self.contact_email, limits::CONTACT_EMAIL, &mut email).is_some() {
            let ok = email.is_empty()
                || e.take(Email::parse(&email).map_err(|err| err.named("fields.contact_email"))).is_some();
            if ok {
                p.contact_email = email;
            }
        }
        let mut country = String::new();
        if text(e, "country", self.country, limits::COUNTRY, &mut country).is_some() {
            if country.is_empty() {
                p.country = None;
            } else if let Some(c) = e.take(CountryCode::parse(&country).map_err(|err| err.named("fields.country"))) {
                p.country = Some(c);
            }
        }
        match self.founded_year {
            None => {}
            Some(None) => p.founded_year = None,
            Some(Some(y)) => {
                if let Some(y) = e.take(FoundedYear::parse(y).map_err(|err| err.named("fields.founded_year"))) {
                    p.founded_year = Some(y);
                }
            }
        }
        list(e, "features", self.features, &mut p.features);
        list(e, "usps", self.usps, &mut p.usps);
        list(e, "keywords", self.keywords, &mut p.keywords);
        if let Some(s) = self.socials
            && let Some(s) = e.take(Socials::parse("socials", s))
        {
            p.socials = s;
        }
        if let Some(f) = self.faqs
            && let Some(f) = e.take(Faq::parse_list("faqs", f))
        {
            p.faqs = f;
        }
        errs.into_result().map(|()| p)
    }
}

/// The week the free plan gives a listing queued at `now`: of the weeks starting between
/// `free_plan_min_weeks` and `free_plan_max_weeks` weeks from now, the one with the fewest free launches
/// (`taken`), earliest on a tie, never one holding `free_plan_weekly_capacity` already. `None` when
/// every week of the window is full.
pub fn free_launch_week(
    now: DateTime<Utc>,
    settings: &SiteSettings,
    mut taken: impl FnMut(LaunchWeek) -> i64,
) -> Option<LaunchWeek> {
    let earliest = now + Duration::weeks(settings.free_plan_min_weeks);
    let latest = now + Duration::weeks(settings.free_plan_max_weeks);
    let mut week = LaunchWeek::of(earliest);
    if week.starts_at() < earliest {
        week = week.plus_weeks(1);
    }
    let mut best: Option<(i64, LaunchWeek)> = None;
    while week.starts_at() <= latest {
        let n = taken(week);
        if n < settings.free_plan_weekly_capacity && best.is_none_or(|(b, _)| n < b) {
            best = Some((n, week));
        }
        week = week.plus_weeks(1);
    }
    best.map(|(_, w)| w)
}

/// The weeks [`free_launch_week`] chooses from, for reading their counts in one go.
pub fn free_window(now: DateTime<Utc>, settings: &SiteSettings) -> Vec<LaunchWeek> {
    let mut weeks = Vec::new();
    free_launch_week(now, settings, |w| {
        weeks.push(w);
        0
    });
    weeks
}

/// The address of a listing's page, as the badge link must name it.
pub fn listing_page(public_url: &str, slug: &str) -> String {
    format!("{}/listings/{slug}", public_url.trim_end_matches('/'))
}

/// A URL compared loosely: no scheme, no `www.`, no query or fragment, no trailing slash, host in
/// lower case.
fn loose(url: &str) -> String {
    let u = url.trim();
    let u = u.strip_prefix("https://").or_else(|| u.strip_prefix("http://")).unwrap_or(u);
    let u = u.split(['?', '#']).next().unwrap_or_default();
    let u = u.strip_prefix("www.").unwrap_or(u);
    let (host, path) = u.split_once('/').unwrap_or((u, ""));
    format!("{}/{}", host.to_ascii_lowercase(), path.trim_end_matches('/'))
}

/// Whether a homepage carries our badge: a real link (`<a href>`) to the listing's page on this site,
/// or one of our badge images for this listing. Returns what was found, for the maker to read.
pub fn badge_placed(hrefs: &[String], images: &[String], public_url: &str, slug: &str) -> Option<String> {
    let page = loose(&listing_page(public_url, slug));
    if let Some(h) = hrefs.iter().find(|h| loose(h) == page) {
        return Some(format!("a link to {}", h.trim()));
    }
    let badge = loose(&format!("{}/badges/{slug}", public_url.trim_end_matches('/')));
    images.iter().find(|i| loose(i).starts_with(&format!("{badge}/"))).map(|i| format!("our badge image {}", i.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn settings() -> SiteSettings {
        SiteSettings::from_pairs([])
    }

    #[test]
    fn free_week_is_a_monday_six_to_eight_weeks_out_with_the_fewest_launches() {
        // A Wednesday.
        let now = Utc.with_ymd_and_hms(2026, 11, 18, 15, 0, 0).unwrap();
        let window = free_window(now, &settings());
        assert_eq!(window.len(), 2, "{window:?}");
        for w in &window {
            let days = (w.starts_at() - now).num_days();
            assert!((42..=56).contains(&days), "{w:?} is {days} days out");
            assert_eq!(w.monday().format("%a").to_string(), "Mon");
        }
        let first = free_launch_week(now, &settings(), |_| 0).unwrap();
        assert_eq!(first, window[0], "ties go to the earliest week");
        let emptier = free_launch_week(now, &settings(), |w| if w == window[0] { 5 } else { 2 }).unwrap();
        assert_eq!(emptier, window[1]);
        let full = free_launch_week(now, &settings(), |w| if w == window[0] { 3 } else { 25 }).unwrap();
        assert_eq!(full, window[0], "a full week is never given");
        assert_eq!(free_launch_week(now, &settings(), |_| 25), None);
        // At Monday midnight both ends of the window are Mondays: three weeks to choose from.
        let monday = Utc.with_ymd_and_hms(2026, 11, 16, 0, 0, 0).unwrap();
        assert_eq!(free_window(monday, &settings()).len(), 3);
    }

    #[test]
    fn edits_apply_within_bounds_and_name_each_offender() {
        let p = ListingProfile::named("Acme", "https://acme.example", "acme.example");
        let ok = OwnEdit {
            tagline: Some(Some("t".repeat(limits::TAGLINE))),
            country: Some(Some("ie".into())),
            founded_year: Some(Some(2100)),
            features: Some(Some(vec!["x".repeat(200); 20])),
            contact_email: Some(Some("hi@acme.example".into())),
            ..Default::default()
        }
        .apply(&p)
        .unwrap();
        assert_eq!(ok.tagline.chars().count(), 200);
        assert_eq!(ok.country.as_ref().map(CountryCode::as_str), Some("IE"));
        let errs = OwnEdit {
            tagline: Some(Some("t".repeat(limits::TAGLINE + 1))),
            country: Some(Some("USA".into())),
            founded_year: Some(Some(2101)),
            features: Some(Some(vec!["x".into(); 21])),
            demo_video_url: Some(Some("ftp://x".into())),
            contact_email: Some(Some("nope".into())),
            ..Default::default()
        }
        .apply(&p)
        .unwrap_err();
        let fields: Vec<&str> = errs.0.iter().map(|e| e.field.as_str()).collect();
        for f in [
            "fields.tagline",
            "fields.country",
            "fields.founded_year",
            "fields.features",
            "fields.demo_video_url",
            "fields.contact_email",
        ] {
            assert!(fields.contains(&f), "{f} missing from {fields:?}");
        }
        let cleared =
            OwnEdit { tagline: Some(None), founded_year: Some(None), ..Default::default() }.apply(&ok).unwrap();
        assert_eq!((cleared.tagline.as_str(), cleared.founded_year), ("", None));
    }

    #[test]
    fn the_badge_is_a_link_to_the_listing_or_our_image() {
        let site = "https://launchdir.example";
        let hrefs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(badge_placed(&hrefs(&["http://www.launchdir.example/listings/acme/"]), &[], site, "acme").is_some());
        assert!(
            badge_placed(&hrefs(&["https://launchdir.example/listings/acme?ref=badge"]), &[], site, "acme").is_some()
        );
        assert!(badge_placed(&hrefs(&["https://launchdir.example/listings/acme-2"]), &[], site, "acme").is_none());
        assert!(badge_placed(&hrefs(&["https://evil.example/listings/acme"]), &[], site, "acme").is_none());
        let img = hrefs(&["https://launchdir.example/badges/acme/listed-on.svg?mode=dark"]);
        assert!(badge_placed(&[], &img, site, "acme").unwrap().starts_with("our badge image"));
        assert!(badge_placed(&[], &img, site, "acm").is_none());
    }
}
