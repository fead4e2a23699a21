//! Drafts: a profile the service drafted from a website. Every value carries verbatim evidence quotes;
//! a value whose quotes are not in the fetched text is dropped and the fact listed as not found.
//! Field states follow the spec: ai, not_found, edited, manual, override, deleted.

use crate::ValidationError;
use crate::founder::FounderEntry;
use crate::ids::{DraftId, ListingId, UserId};
use crate::listing::TransitionError;
use crate::sections::{Milestone, Story};
use crate::social::{Faq, Socials};
use crate::text::{check_list, check_max, normalize_whitespace};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

/// The editable profile fields of a draft, in the spec's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DraftField {
    Name,
    Tagline,
    ShortDescription,
    Description,
    Stage,
    Categories,
    Tags,
    PricingModel,
    PricingSummary,
    Country,
    City,
    FoundedYear,
    Features,
    Usps,
    Keywords,
    ContactEmail,
    DemoVideoUrl,
    LogoUrl,
}

/// Whether a field holds one string or a list of strings, and its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldShape {
    Text { max: usize },
    List { max_items: usize, max_each: usize },
}

impl DraftField {
    pub const ALL: [Self; 18] = [
        Self::Name,
        Self::Tagline,
        Self::ShortDescription,
        Self::Description,
        Self::Stage,
        Self::Categories,
        Self::Tags,
        Self::PricingModel,
        Self::PricingSummary,
        Self::Country,
        Self::City,
        Self::FoundedYear,
        Self::Features,
        Self::Usps,
        Self::Keywords,
        Self::ContactEmail,
        Self::DemoVideoUrl,
        Self::LogoUrl,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::Tagline => "tagline",
            Self::ShortDescription => "short_description",
            Self::Description => "description",
            Self::Stage => "stage",
            Self::Categories => "categories",
            Self::Tags => "tags",
            Self::PricingModel => "pricing_model",
            Self::PricingSummary => "pricing_summary",
            Self::Country => "country",
            Self::City => "city",
            Self::FoundedYear => "founded_year",
            Self::Features => "features",
            Self::Usps => "usps",
            Self::Keywords => "keywords",
            Self::ContactEmail => "contact_email",
            Self::DemoVideoUrl => "demo_video_url",
            Self::LogoUrl => "logo_url",
        }
    }

    /// Parses a field name; `field` is the parameter the name came in (`lock_fields[2]`).
    pub fn parse(raw: &str, field: &str) -> Result<Self, ValidationError> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == raw)
            .ok_or_else(|| ValidationError::new(field, format!("unknown draft field {raw:?}")))
    }

    /// The bounds of the "Draft editable fields" table.
    pub fn shape(self) -> FieldShape {
        match self {
            Self::Description => FieldShape::Text { max: 20000 },
            Self::Categories | Self::Tags | Self::Features | Self::Usps | Self::Keywords => {
                FieldShape::List { max_items: 20, max_each: 200 }
            }
            _ => FieldShape::Text { max: 500 },
        }
    }
}

/// A field's value: one string or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    Text(String),
    List(Vec<String>),
}

impl FieldValue {
    /// Checks the value against the field's shape and bounds; errors name `fields.<name>`.
    pub fn check(&self, field: DraftField) -> Result<(), ValidationError> {
        let path = format!("fields.{}", field.as_str());
        match (field.shape(), self) {
            (FieldShape::Text { max }, Self::Text(s)) => check_max(&path, s, max),
            (FieldShape::List { max_items, max_each }, Self::List(items)) => {
                check_list(&path, items, max_items, max_each)
            }
            (FieldShape::Text { .. }, Self::List(_)) => Err(ValidationError::new(path, "must be a string or null")),
            (FieldShape::List { .. }, Self::Text(_)) => {
                Err(ValidationError::new(path, "must be an array of strings or null"))
            }
        }
    }

    pub fn is_blank(&self) -> bool {
        match self {
            Self::Text(s) => s.trim().is_empty(),
            Self::List(v) => v.iter().all(|s| s.trim().is_empty()),
        }
    }
}

/// Who last decided a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldState {
    /// Drafted by the service from website evidence.
    Ai,
    /// The website does not state it; left blank on purpose.
    NotFound,
    /// The user changed a value the service had drafted.
    Edited,
    /// The user filled a field the service had left blank.
    Manual,
    /// Locked by the user against redrafts.
    Override,
    /// Removed by the user (null in update_draft).
    Deleted,
}

impl FieldState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ai => "ai",
            Self::NotFound => "not_found",
            Self::Edited => "edited",
            Self::Manual => "manual",
            Self::Override => "override",
            Self::Deleted => "deleted",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Ai, Self::NotFound, Self::Edited, Self::Manual, Self::Override, Self::Deleted]
            .into_iter()
            .find(|s| s.as_str() == raw)
    }
}

/// A verbatim quote from a fetched page, and the page it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub quote: String,
    pub url: String,
}

/// The text of the pages fetched for a draft, normalised once, against which quotes are checked.
#[derive(Debug, Clone, Default)]
pub struct SiteText {
    pages: Vec<(String, String)>,
}

impl SiteText {
    pub fn new(pages: impl IntoIterator<Item = (String, String)>) -> Self {
        Self { pages: pages.into_iter().map(|(url, text)| (url, normalize_whitespace(&text))).collect() }
    }

    /// True when `quote` (whitespace-normalised, non-empty) occurs verbatim in the page it names, or in
    /// any page when the URL is not one we fetched.
    pub fn contains(&self, e: &Evidence) -> bool {
        let q = normalize_whitespace(&e.quote);
        if q.is_empty() {
            return false;
        }
        let named: Vec<&String> = self.pages.iter().filter(|(u, _)| *u == e.url).map(|(_, t)| t).collect();
        if named.is_empty() {
            self.pages.iter().any(|(_, t)| t.contains(&q))
        } else {
            named.iter().any(|t| t.contains(&q))
        }
    }

    /// True when `text` (whitespace-normalised, non-empty) occurs verbatim on some fetched page.
    pub fn states(&self, text: &str) -> bool {
        let q = normalize_whitespace(text);
        !q.is_empty() && self.pages.iter().any(|(_, t)| t.contains(&q))
    }

    /// The quotes, each pointing at a page we fetched that holds it (the page it names when that one
    /// does, else the first that does), or `None` when any quote is in no fetched page. A drafter (an
    /// LLM above all) may name any address; what is stored and linked is only ever a page the crawler
    /// read.
    pub fn anchored(&self, evidence: &[Evidence]) -> Option<Vec<Evidence>> {
        evidence
            .iter()
            .map(|e| {
                let q = normalize_whitespace(&e.quote);
                if q.is_empty() {
                    return None;
                }
                let named = self.pages.iter().find(|(u, t)| *u == e.url && t.contains(&q));
                let page = named.or_else(|| self.pages.iter().find(|(_, t)| t.contains(&q)))?;
                Some(Evidence { quote: e.quote.clone(), url: page.0.clone() })
            })
            .collect()
    }
}

/// What a drafter proposes for one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub value: FieldValue,
    pub evidence: Vec<Evidence>,
}

/// One field of a draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftFieldEntry {
    pub value: Option<FieldValue>,
    pub state: FieldState,
    pub evidence: Vec<Evidence>,
    /// The service's own last value, kept for `restore`.
    pub ai_value: Option<FieldValue>,
    pub ai_evidence: Vec<Evidence>,
}

impl DraftFieldEntry {
    fn not_found() -> Self {
        Self { value: None, state: FieldState::NotFound, evidence: vec![], ai_value: None, ai_evidence: vec![] }
    }
}

/// Drafting progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftStatus {
    Crawling,
    Drafting,
    Ready,
    /// The site could not be drafted; the reason is written for a person.
    Failed {
        reason: String,
    },
}

impl DraftStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Crawling => "crawling",
            Self::Drafting => "drafting",
            Self::Ready => "ready",
            Self::Failed { .. } => "failed",
        }
    }

    fn refuse(&self, action: &'static str) -> TransitionError {
        TransitionError { machine: "draft", action, current: self.as_str() }
    }

    pub fn crawled(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Crawling => {
                *self = Self::Drafting;
                Ok(())
            }
            _ => Err(self.refuse("start drafting")),
        }
    }

    pub fn drafted(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Drafting => {
                *self = Self::Ready;
                Ok(())
            }
            _ => Err(self.refuse("finish drafting")),
        }
    }

    pub fn fail(&mut self, reason: impl Into<String>) -> Result<(), TransitionError> {
        match self {
            Self::Crawling | Self::Drafting => {
                *self = Self::Failed { reason: reason.into() };
                Ok(())
            }
            _ => Err(self.refuse("fail")),
        }
    }

    /// A failed draft may be tried again from the start.
    pub fn retry(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Failed { .. } => {
                *self = Self::Crawling;
                Ok(())
            }
            _ => Err(self.refuse("retry")),
        }
    }

    pub fn is_ready(&self) -> bool {
        matches!(self, Self::Ready)
    }
}

/// The drafted profile: one entry per editable field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftProfile {
    fields: BTreeMap<DraftField, DraftFieldEntry>,
}

impl Default for DraftProfile {
    fn default() -> Self {
        Self { fields: DraftField::ALL.into_iter().map(|f| (f, DraftFieldEntry::not_found())).collect() }
    }
}

impl DraftProfile {
    pub fn field(&self, f: DraftField) -> &DraftFieldEntry {
        // Every field is present: built from DraftField::ALL and never removed.
        &self.fields[&f]
    }

    fn entry(&mut self, f: DraftField) -> &mut DraftFieldEntry {
        self.fields.entry(f).or_insert_with(DraftFieldEntry::not_found)
    }

    /// Rebuilds a profile from stored entries; missing fields are not found.
    pub fn from_entries(entries: impl IntoIterator<Item = (DraftField, DraftFieldEntry)>) -> Self {
        let mut p = Self::default();
        for (f, e) in entries {
            p.fields.insert(f, e);
        }
        p
    }

    pub fn entries(&self) -> impl Iterator<Item = (DraftField, &DraftFieldEntry)> {
        self.fields.iter().map(|(f, e)| (*f, e))
    }

    /// Applies the service's proposal for `f`, unless the user owns the field. The evidence rule is
    /// enforced here, not trusted to the drafter: the value is kept only if it has at least one quote
    /// and every quote occurs verbatim in `site`; otherwise the field becomes not found.
    /// Returns whether the proposal was accepted.
    pub fn apply_ai(&mut self, f: DraftField, proposal: Option<Proposal>, site: &SiteText) -> bool {
        self.apply(f, proposal, site, false)
    }

    /// regenerate: the service redrafts `f` from the website and the fresh result replaces the
    /// field's value whoever set it — an edited, manual or deleted value gives way to the new AI value
    /// (or to not found when the site no longer states it). Only a locked field keeps its value; the
    /// operation refuses to regenerate one before it gets here.
    pub fn regenerate(&mut self, f: DraftField, proposal: Option<Proposal>, site: &SiteText) -> bool {
        self.apply(f, proposal, site, true)
    }

    fn apply(&mut self, f: DraftField, proposal: Option<Proposal>, site: &SiteText, replace_users: bool) -> bool {
        let accepted = proposal.filter(|p| passes(f, p, site));
        let accepted = accepted.map(|p| Proposal { evidence: site.anchored(&p.evidence).unwrap_or_default(), ..p });
        let e = self.entry(f);
        e.ai_value = accepted.as_ref().map(|p| p.value.clone());
        e.ai_evidence = accepted.as_ref().map(|p| p.evidence.clone()).unwrap_or_default();
        let users = matches!(e.state, FieldState::Edited | FieldState::Manual | FieldState::Deleted);
        if e.state == FieldState::Override || (users && !replace_users) {
            return accepted.is_some();
        }
        match accepted {
            Some(p) => {
                e.value = Some(p.value);
                e.evidence = p.evidence;
                e.state = FieldState::Ai;
                true
            }
            None => {
                e.value = None;
                e.evidence = vec![];
                e.state = FieldState::NotFound;
                false
            }
        }
    }

    /// The user sets a value: `edited` over a drafted value, `manual` where there was none.
    pub fn set_by_user(&mut self, f: DraftField, value: FieldValue) -> Result<(), ValidationError> {
        value.check(f)?;
        let e = self.entry(f);
        let state = if e.ai_value.is_some() { FieldState::Edited } else { FieldState::Manual };
        e.value = Some(value);
        e.evidence = vec![];
        // A locked field stays locked when its owner edits it.
        if e.state != FieldState::Override {
            e.state = state;
        }
        Ok(())
    }

    /// null in update_draft: the field is removed and stays removed through redrafts until restored.
    pub fn remove(&mut self, f: DraftField) {
        let e = self.entry(f);
        e.value = None;
        e.evidence = vec![];
        e.state = FieldState::Deleted;
    }

    /// lock_fields: the current value is protected against redrafts.
    pub fn lock(&mut self, f: DraftField) {
        self.entry(f).state = FieldState::Override;
    }

    /// restore: back to the service's own value (or not found when it had none).
    pub fn restore(&mut self, f: DraftField) {
        let e = self.entry(f);
        e.value = e.ai_value.clone();
        e.evidence = e.ai_evidence.clone();
        e.state = if e.value.is_some() { FieldState::Ai } else { FieldState::NotFound };
    }

    /// regenerate: whether the service may redraft `f` (a locked field is refused).
    pub fn may_regenerate(&self, f: DraftField) -> bool {
        self.field(f).state != FieldState::Override
    }

    /// Fields without a value, in the spec's order: what is still missing.
    pub fn missing(&self) -> Vec<DraftField> {
        self.fields.iter().filter(|(_, e)| e.value.as_ref().is_none_or(FieldValue::is_blank)).map(|(f, _)| *f).collect()
    }

    /// Fields the website did not state (left blank on purpose, never guessed).
    pub fn not_found(&self) -> Vec<DraftField> {
        self.fields.iter().filter(|(_, e)| e.state == FieldState::NotFound).map(|(f, _)| *f).collect()
    }

    /// Percentage of fields with a value (0–100).
    pub fn completeness(&self) -> u8 {
        let filled = DraftField::ALL.len() - self.missing().len();
        (filled * 100 / DraftField::ALL.len()) as u8
    }
}

/// A drafted FAQ with the quotes it was read from (empty when the user wrote it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftFaq {
    pub faq: Faq,
    pub evidence: Vec<Evidence>,
}

/// A drafted founder with the quotes they were read from (empty when the user wrote them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftFounder {
    pub founder: FounderEntry,
    pub evidence: Vec<Evidence>,
}

/// SEO texts of a draft: title max 70, meta description max 170.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seo {
    pub title: String,
    pub meta: String,
}

impl Seo {
    pub fn parse(title: Option<String>, meta: Option<String>) -> Result<Self, ValidationError> {
        let (title, meta) = (title.unwrap_or_default(), meta.unwrap_or_default());
        check_max("seo.title", &title, limits::SEO_TITLE)?;
        check_max("seo.meta", &meta, limits::SEO_META)?;
        Ok(Self { title, meta })
    }
}

/// Where reading a competitor's site stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompetitorStatus {
    Reading,
    Ready,
    Failed { reason: String },
}

impl CompetitorStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Reading => "reading",
            Self::Ready => "ready",
            Self::Failed { .. } => "failed",
        }
    }
}

/// One row of a comparison: our draft's value and the competitor's, each blank where that site does
/// not state it; the competitor's value carries its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonRow {
    pub field: DraftField,
    pub ours: Option<FieldValue>,
    pub theirs: Option<FieldValue>,
    pub their_evidence: Vec<Evidence>,
}

/// The competitor a maker named, read the same safe way as their own site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Competitor {
    pub url: String,
    /// Private: it moves only from reading to ready ([`Competitor::compared`]) or failed
    /// ([`Competitor::failed`]).
    status: CompetitorStatus,
    pub rows: Vec<ComparisonRow>,
}

/// The fields a comparison covers, in display order.
pub const COMPARED_FIELDS: [DraftField; 8] = [
    DraftField::Name,
    DraftField::Tagline,
    DraftField::PricingModel,
    DraftField::PricingSummary,
    DraftField::Features,
    DraftField::Stage,
    DraftField::Country,
    DraftField::FoundedYear,
];

impl Competitor {
    /// A competitor just named: its site is still to be read.
    pub fn reading(url: String) -> Self {
        Self { url, status: CompetitorStatus::Reading, rows: Vec::new() }
    }

    /// A competitor as storage reads it back (storage holds only states the transitions produced).
    pub fn from_parts(url: String, status: CompetitorStatus, rows: Vec<ComparisonRow>) -> Self {
        Self { url, status, rows }
    }

    pub fn status(&self) -> &CompetitorStatus {
        &self.status
    }

    fn refused(&self, action: &'static str) -> TransitionError {
        TransitionError { machine: "competitor", action, current: self.status.as_str() }
    }

    /// The site was read: the comparison from our profile and the competitor's (already held to the
    /// evidence rule). Only a competitor being read can become ready.
    pub fn compared(&mut self, ours: &DraftProfile, theirs: &DraftProfile) -> Result<(), TransitionError> {
        if self.status != CompetitorStatus::Reading {
            return Err(self.refused("compare"));
        }
        self.rows = COMPARED_FIELDS
            .into_iter()
            .map(|f| ComparisonRow {
                field: f,
                ours: ours.field(f).value.clone(),
                theirs: theirs.field(f).value.clone(),
                their_evidence: theirs.field(f).evidence.clone(),
            })
            .collect();
        self.status = CompetitorStatus::Ready;
        Ok(())
    }

    /// Reading the site failed, for `reason` (said to the maker). Only a competitor being read fails.
    pub fn failed(&mut self, reason: String) -> Result<(), TransitionError> {
        if self.status != CompetitorStatus::Reading {
            return Err(self.refused("fail"));
        }
        self.status = CompetitorStatus::Failed { reason };
        self.rows.clear();
        Ok(())
    }
}

/// Everything of a draft beside the profile fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DraftExtras {
    pub faqs: Vec<DraftFaq>,
    /// The user replaced the FAQs: redrafts leave them alone.
    pub faqs_by_user: bool,
    pub founders: Vec<DraftFounder>,
    pub founders_by_user: bool,
    pub company_socials: Socials,
    pub company_socials_by_user: bool,
    pub founder_socials: Socials,
    pub story: Story,
    pub milestones: Vec<Milestone>,
    pub seo: Seo,
    pub competitor: Option<Competitor>,
    /// Fields a regenerate asked for that the service has not redrafted yet.
    pub regenerating: Vec<DraftField>,
}

/// What a drafter read from a site. Nothing here is trusted: [`Draft::apply_drafted`] keeps a value
/// only when its evidence is in the fetched text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drafted {
    pub fields: Vec<(DraftField, Proposal)>,
    pub faqs: Vec<DraftFaq>,
    pub founders: Vec<DraftFounder>,
    /// Platform key → link, read from the site's own anchors.
    pub company_socials: Vec<(String, String)>,
}

/// A draft as storage holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub id: DraftId,
    pub owner: UserId,
    pub url: String,
    /// Private: it moves only through the transitions below ([`Draft::crawled`] …).
    status: DraftStatus,
    pub profile: DraftProfile,
    pub extras: DraftExtras,
    pub listing_id: Option<ListingId>,
    /// Bumped by every save; a save with a stale version is refused (optimistic concurrency).
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A draft as storage reads it back, every field public: [`Draft::from`] it. Storage only holds
/// statuses the transitions produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftRecord {
    pub id: DraftId,
    pub owner: UserId,
    pub url: String,
    pub status: DraftStatus,
    pub profile: DraftProfile,
    pub extras: DraftExtras,
    pub listing_id: Option<ListingId>,
    /// Bumped by every save; a save with a stale version is refused (optimistic concurrency).
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<DraftRecord> for Draft {
    fn from(r: DraftRecord) -> Self {
        Self {
            id: r.id,
            owner: r.owner,
            url: r.url,
            status: r.status,
            profile: r.profile,
            extras: r.extras,
            listing_id: r.listing_id,
            version: r.version,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

impl Draft {
    pub fn status(&self) -> &DraftStatus {
        &self.status
    }

    /// The site was read: drafting starts (crawling → drafting).
    pub fn crawled(&mut self) -> Result<(), TransitionError> {
        self.status.crawled()
    }

    /// The drafter's proposals are applied: the draft is ready (drafting → ready).
    pub fn drafted(&mut self) -> Result<(), TransitionError> {
        self.status.drafted()
    }

    /// The site could not be read or drafted: failed, with the reason for a person.
    pub fn fail(&mut self, reason: impl Into<String>) -> Result<(), TransitionError> {
        self.status.fail(reason)
    }

    /// A failed draft is read again (failed → crawling).
    pub fn retry(&mut self) -> Result<(), TransitionError> {
        self.status.retry()
    }

    /// A new draft for `url`, about to be crawled.
    pub fn new(id: DraftId, owner: UserId, url: SiteUrl, now: DateTime<Utc>) -> Self {
        Self {
            id,
            owner,
            url: url.into_inner(),
            status: DraftStatus::Crawling,
            profile: DraftProfile::default(),
            extras: DraftExtras::default(),
            listing_id: None,
            version: 0,
            created_at: now,
            updated_at: now,
        }
    }

    /// Applies what a drafter proposed, holding every value to the evidence rule against `site`.
    /// `only` limits the redraft to the named fields (regenerate); `None` drafts everything, and then
    /// fields the drafter did not propose become not found.
    pub fn apply_drafted(&mut self, drafted: Drafted, site: &SiteText, only: Option<&[DraftField]>) {
        let wanted: Vec<DraftField> = match only {
            Some(fs) => fs.iter().copied().filter(|f| self.profile.may_regenerate(*f)).collect(),
            None => DraftField::ALL.to_vec(),
        };
        let mut proposals: BTreeMap<DraftField, Proposal> = BTreeMap::new();
        for (f, p) in drafted.fields {
            // The first proposal for a field that passes the rule wins; later ones are alternatives.
            let keep = !proposals.contains_key(&f);
            if keep && wanted.contains(&f) && passes(f, &p, site) {
                proposals.insert(f, p);
            }
        }
        for f in wanted {
            if only.is_some() {
                self.profile.regenerate(f, proposals.remove(&f), site);
            } else {
                self.profile.apply_ai(f, proposals.remove(&f), site);
            }
        }
        self.extras.regenerating.retain(|f| only.is_some_and(|o| !o.contains(f)));
        if only.is_some() {
            return;
        }
        if !self.extras.faqs_by_user {
            // The question and the answer are the value: each must be on the site word for word.
            self.extras.faqs = drafted
                .faqs
                .into_iter()
                .filter(|q| !q.evidence.is_empty())
                .filter(|q| site.states(q.faq.question.as_str()) && site.states(q.faq.answer.as_str()))
                .filter_map(|q| Some(DraftFaq { evidence: site.anchored(&q.evidence)?, ..q }))
                .take(Faq::MAX_ITEMS)
                .collect();
        }
        if !self.extras.founders_by_user {
            // A founder's name must be on the site; a title or bio that is not is dropped, not kept.
            self.extras.founders = drafted
                .founders
                .into_iter()
                .filter(|f| !f.evidence.is_empty() && site.states(f.founder.name.as_str()))
                .filter_map(|f| {
                    let evidence = site.anchored(&f.evidence)?;
                    let keep = |t: &str| if site.states(t) { t.to_owned() } else { String::new() };
                    let founder = crate::founder::FounderEntry::parse(
                        f.founder.name.as_str().to_owned(),
                        Some(keep(f.founder.title.as_str())),
                        Some(keep(f.founder.bio.as_str())),
                    )
                    .ok()?;
                    Some(DraftFounder { founder, evidence })
                })
                .take(limits::FOUNDERS)
                .collect();
        }
        if !self.extras.company_socials_by_user {
            // A link is its own evidence: it is kept only when the fetched pages hold it.
            let found = drafted
                .company_socials
                .into_iter()
                .filter(|(_, link)| site.contains(&Evidence { quote: link.clone(), url: String::new() }));
            if let Ok(s) = Socials::parse("company_socials", found) {
                self.extras.company_socials = s;
            }
        }
    }

    /// Facts the site did not state, by field name, as a listing's `not_found_on_website` lists them.
    pub fn not_found_names(&self) -> Vec<String> {
        self.profile.not_found().into_iter().map(|f| f.as_str().to_owned()).collect()
    }
}

/// The evidence rule: a value with at least one quote, every quote verbatim on a fetched page, and —
/// for lists of the site's own words (features, USPs, keywords, tags) — every item on the site too, so
/// an item cannot ride in on another item's quote. Categories are our names, matched by the drafter.
fn passes(f: DraftField, p: &Proposal, site: &SiteText) -> bool {
    let items_stated = match (&p.value, f) {
        (
            FieldValue::List(items),
            DraftField::Features | DraftField::Usps | DraftField::Keywords | DraftField::Tags,
        ) => items.iter().all(|i| site.states(i)),
        _ => true,
    };
    !p.value.is_blank()
        && p.value.check(f).is_ok()
        && !p.evidence.is_empty()
        && p.evidence.iter().all(|e| site.contains(e))
        && items_stated
}

/// What one account may have read for it: drafts being read at once, and sites read (submissions and
/// competitor pages) a UTC day. Strangers cannot turn the crawler into a free fetching service.
pub mod crawl_caps {
    /// Drafts of one account in crawling or drafting at the same time.
    pub const CONCURRENT: u64 = 3;
    /// Sites read for one account in 24 hours.
    pub const PER_DAY: i64 = 30;
}

/// A website address a maker submits: http or https, a host, no credentials, max 2048 characters.
/// A bare `acme.example` is read as `https://acme.example/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteUrl(String);

impl SiteUrl {
    pub const MAX: usize = 2048;

    /// The JSON Schema pattern of what [`SiteUrl::parse`] accepts, character for character: an optional
    /// `http://` or `https://` (any case), a host name (not starting with `.` or `-`; a website, so no
    /// bracketed IPv6 literal), an optional port of 1 to 5 digits, then an optional path, query or
    /// fragment. No spaces or control characters anywhere.
    pub const PATTERN: &'static str = concat!(
        "^(?:[Hh][Tt][Tt][Pp][Ss]?://)?",
        "(?:[^\\x00-\\x20\\x7F-\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF/?#@:\\[\\].-]",
        "[^\\x00-\\x20\\x7F-\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF/?#@:\\[\\]]*)",
        "(?::[0-9]{1,5})?",
        "(?:[/?#][^\\x00-\\x20\\x7F-\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF]*)?$",
    );

    /// Errors name `field` (`url`, `competitor_url`). Accepts exactly what [`SiteUrl::PATTERN`] says.
    pub fn parse(field: &str, raw: &str) -> Result<Self, ValidationError> {
        check_max(field, raw, Self::MAX)?;
        if raw.is_empty() {
            return Err(ValidationError::new(field, "must not be empty"));
        }
        // Unicode white space and control characters; U+FEFF (a zero-width no-break space) too.
        if raw.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\u{feff}') {
            return Err(ValidationError::new(field, "must not contain spaces"));
        }
        let lower = raw.get(..8).unwrap_or(raw).to_ascii_lowercase();
        let (scheme, rest) = if lower.starts_with("https://") {
            ("https://", &raw[8..])
        } else if lower.starts_with("http://") {
            ("http://", &raw[7..])
        } else if raw.split_once("://").is_some_and(|(s, _)| {
            s.starts_with(|c: char| c.is_ascii_alphabetic())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
        }) {
            return Err(ValidationError::new(field, "must be an http or https address"));
        } else {
            ("https://", raw)
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err(ValidationError::new(field, "must not contain a user name or password"));
        }
        let (host, port) = authority.find(':').map_or((authority, ""), |i| authority.split_at(i));
        if host.is_empty() || host.starts_with(['.', '-']) || host.contains(['[', ']']) {
            return Err(ValidationError::new(field, "must name a website host"));
        }
        if !port.is_empty()
            && !port
                .strip_prefix(':')
                .is_some_and(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(ValidationError::new(field, "has a port that is not 1 to 5 digits"));
        }
        // The bound is the input's (as the schema declares it): the `https://` and `/` added to a bare
        // host may take the stored address a few characters past it.
        let url = if tail.is_empty() { format!("{scheme}{authority}/") } else { format!("{scheme}{authority}{tail}") };
        Ok(Self(url))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// Bounds of update_draft's other keys (Limits 3).
pub mod limits {
    pub const LOCK_FIELDS: usize = 20;
    pub const REGENERATE: usize = 5;
    pub const RESTORE: usize = 20;
    pub const FOUNDERS: usize = 6;
    pub const MILESTONES: usize = 50;
    pub const INVITES_PER_LISTING: usize = 10;
    pub const COMPETITOR_URL: usize = 2048;
    pub const SEO_TITLE: usize = 70;
    pub const SEO_META: usize = 170;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_competitor_settles_once_from_reading() {
        let ours = DraftProfile::default();
        let mut c = Competitor::reading("https://rival.example/".into());
        c.compared(&ours, &ours).unwrap();
        assert_eq!((c.status(), c.rows.len()), (&CompetitorStatus::Ready, COMPARED_FIELDS.len()));
        let refused = c.failed("late failure".into()).unwrap_err();
        assert_eq!((refused.action, refused.current), ("fail", "ready"));
        assert_eq!(c.status(), &CompetitorStatus::Ready, "a refused move changes nothing");

        let mut f = Competitor::reading("https://rival.example/".into());
        f.failed("unreachable".into()).unwrap();
        assert_eq!(f.compared(&ours, &ours).unwrap_err().current, "failed");
        assert!(f.rows.is_empty());
    }

    #[test]
    fn site_urls_are_bounded_as_given() {
        let host = format!("{}.example", "a".repeat(2040));
        assert_eq!(host.chars().count(), 2048);
        assert_eq!(SiteUrl::parse("url", &host).unwrap().as_str(), format!("https://{host}/"), "2048 as typed");
        let over = format!("{}.example", "a".repeat(2041));
        assert_eq!(SiteUrl::parse("url", &over).unwrap_err().field, "url");
    }
    use proptest::prelude::*;

    #[test]
    fn site_urls_refused_are_refused_by_the_pattern_too() {
        let pattern = regex::Regex::new(SiteUrl::PATTERN).unwrap();
        for ok in ["acme.example", "HTTPS://Acme.example:8443/a b?c#d", "http://127.0.0.1:80/", "xn--caf-dma.example?q"]
        {
            let ok = ok.replace(' ', "%20");
            assert!(SiteUrl::parse("url", &ok).is_ok(), "{ok}");
            assert!(pattern.is_match(&ok), "{ok}");
        }
        for bad in [
            "",
            " acme.example",
            "acme.example\u{feff}",
            "ftp://acme.example",
            "https://",
            "user@acme.example",
            ".acme.example",
            "-acme.example",
            "acme.example:http",
            "acme.example:123456",
            "[zz]",
            "a[b].example",
            "acme\u{85}.example",
            "a_b://c",
            "http://[::1]/",
        ] {
            assert!(SiteUrl::parse("url", bad).is_err(), "{bad:?} parsed");
            assert!(!pattern.is_match(bad), "{bad:?} matched");
        }
    }

    proptest! {
        /// Everything the pattern describes, the parser accepts.
        #[test]
        fn what_the_pattern_allows_parses(raw in proptest::string::string_regex(
            SiteUrl::PATTERN.trim_start_matches('^').trim_end_matches('$'),
        ).unwrap()) {
            prop_assume!(raw.chars().count() <= SiteUrl::MAX);
            prop_assert!(SiteUrl::parse("url", &raw).is_ok(), "{:?}", raw);
        }

        /// Everything the parser accepts, the pattern describes.
        #[test]
        fn what_parses_matches_the_pattern(raw in "[a-zA-Z0-9:/?#@.\\[\\]_ \u{a0}\u{feff}-]{0,24}") {
            let pattern = regex::Regex::new(SiteUrl::PATTERN).unwrap();
            prop_assert_eq!(SiteUrl::parse("url", &raw).is_ok(), pattern.is_match(&raw), "{:?}", raw);
        }
    }

    fn site() -> SiteText {
        SiteText::new([(
            "https://acme.example/".to_owned(),
            "Acme   builds\nrockets for cats.\nFounded in Cork.".to_owned(),
        )])
    }

    fn proposal(v: &str, quote: &str) -> Option<Proposal> {
        Some(Proposal {
            value: FieldValue::Text(v.into()),
            evidence: vec![Evidence { quote: quote.into(), url: "https://acme.example/".into() }],
        })
    }

    #[test]
    fn evidence_links_only_ever_point_at_pages_we_fetched() {
        let mut p = DraftProfile::default();
        let lying = Some(Proposal {
            value: FieldValue::Text("Rockets for cats".into()),
            evidence: vec![Evidence { quote: "rockets for cats.".into(), url: "javascript:alert(1)".into() }],
        });
        assert!(p.apply_ai(DraftField::Tagline, lying, &site()));
        let urls: Vec<&str> = p.field(DraftField::Tagline).evidence.iter().map(|e| e.url.as_str()).collect();
        assert_eq!(urls, ["https://acme.example/"], "re-pointed at the page that holds the quote");
        let elsewhere = vec![Evidence { quote: "Founded in Cork.".into(), url: "https://evil.example/".into() }];
        assert_eq!(site().anchored(&elsewhere).unwrap()[0].url, "https://acme.example/");
        let missing = vec![Evidence { quote: "Founded in Dublin.".into(), url: "https://acme.example/".into() }];
        assert!(site().anchored(&missing).is_none());
    }

    #[test]
    fn a_value_needs_verbatim_evidence() {
        let mut p = DraftProfile::default();
        assert!(p.apply_ai(
            DraftField::Tagline,
            proposal("Rockets for cats", "Acme builds rockets for cats."),
            &site()
        ));
        assert_eq!(p.field(DraftField::Tagline).state, FieldState::Ai);
        // A quote the site does not contain: the value is dropped, the fact is not found.
        assert!(!p.apply_ai(DraftField::City, proposal("Dublin", "Founded in Dublin."), &site()));
        assert_eq!(p.field(DraftField::City).state, FieldState::NotFound);
        assert_eq!(p.field(DraftField::City).value, None);
        // No quote at all is no evidence.
        let bare = Some(Proposal { value: FieldValue::Text("1999".into()), evidence: vec![] });
        assert!(!p.apply_ai(DraftField::FoundedYear, bare, &site()));
        assert!(p.not_found().contains(&DraftField::FoundedYear));
    }

    #[test]
    fn user_states_and_locks() {
        let mut p = DraftProfile::default();
        p.apply_ai(DraftField::Tagline, proposal("Rockets", "rockets for cats"), &site());
        p.set_by_user(DraftField::Tagline, FieldValue::Text("Cat rockets".into())).unwrap();
        assert_eq!(p.field(DraftField::Tagline).state, FieldState::Edited);
        p.set_by_user(DraftField::City, FieldValue::Text("Cork".into())).unwrap();
        assert_eq!(p.field(DraftField::City).state, FieldState::Manual);
        // A redraft leaves the user's value alone but remembers the AI's for restore.
        p.apply_ai(DraftField::Tagline, proposal("Acme", "Acme builds"), &site());
        assert_eq!(p.field(DraftField::Tagline).value, Some(FieldValue::Text("Cat rockets".into())));
        p.restore(DraftField::Tagline);
        assert_eq!(p.field(DraftField::Tagline).value, Some(FieldValue::Text("Acme".into())));
        assert_eq!(p.field(DraftField::Tagline).state, FieldState::Ai);
        p.lock(DraftField::Tagline);
        assert!(!p.may_regenerate(DraftField::Tagline));
        p.remove(DraftField::City);
        assert_eq!(p.field(DraftField::City).state, FieldState::Deleted);
        p.restore(DraftField::City);
        assert_eq!(p.field(DraftField::City).state, FieldState::NotFound);
    }

    #[test]
    fn every_item_of_a_list_of_the_sites_words_is_on_the_site() {
        let mut p = DraftProfile::default();
        let list = |items: &[&str], quote: &str| {
            Some(Proposal {
                value: FieldValue::List(items.iter().map(|s| (*s).to_owned()).collect()),
                evidence: vec![Evidence { quote: quote.into(), url: "https://acme.example/".into() }],
            })
        };
        assert!(!p.apply_ai(
            DraftField::Features,
            list(&["rockets for cats", "time travel"], "rockets for cats"),
            &site()
        ));
        assert!(p.apply_ai(DraftField::Features, list(&["rockets for cats"], "rockets for cats"), &site()));
        // Categories are our names, not the site's words.
        assert!(p.apply_ai(DraftField::Categories, list(&["Pet Tech"], "rockets for cats"), &site()));
    }

    #[test]
    fn drafted_faqs_and_founders_must_be_on_the_site_word_for_word() {
        use crate::founder::FounderEntry;
        let site = SiteText::new([(
            "https://acme.example/".to_owned(),
            "Aoife Byrne Co-founder & CEO Is it safe? Every flight is supervised.".to_owned(),
        )]);
        let ev = |q: &str| vec![Evidence { quote: q.into(), url: "https://acme.example/".into() }];
        let faq =
            |q: &str, a: &str| DraftFaq { faq: Faq::parse(q.into(), a.into()).unwrap(), evidence: ev("Is it safe?") };
        let founder = |n: &str, t: &str, b: &str| DraftFounder {
            founder: FounderEntry::parse(n.into(), Some(t.into()), Some(b.into())).unwrap(),
            evidence: ev("Aoife Byrne"),
        };
        let mut d = Draft::new(
            DraftId::new_random(),
            UserId::from_db(1),
            SiteUrl::parse("url", "https://acme.example/").unwrap(),
            Utc::now(),
        );
        let drafted = Drafted {
            faqs: vec![faq("Is it safe?", "Every flight is supervised."), faq("Is it safe?", "Totally, 100% safe.")],
            founders: vec![
                founder("Aoife Byrne", "Co-founder & CEO", "Aoife flew rockets for NASA."),
                founder("Elon Example", "Founder", ""),
            ],
            ..Drafted::default()
        };
        d.apply_drafted(drafted, &site, None);
        assert_eq!(d.extras.faqs.len(), 1, "an answer the site does not give is dropped");
        assert_eq!(d.extras.faqs[0].faq.answer.as_str(), "Every flight is supervised.");
        assert_eq!(d.extras.founders.len(), 1, "a person the site does not name is dropped");
        assert_eq!(d.extras.founders[0].founder.title.as_str(), "Co-founder & CEO");
        assert_eq!(d.extras.founders[0].founder.bio.as_str(), "", "a bio the site does not state is dropped");
    }

    #[test]
    fn regenerate_replaces_what_the_user_set_but_not_a_lock() {
        let fresh = || proposal("Rockets for cats", "rockets for cats");
        let mut p = DraftProfile::default();
        // Edited: the fresh AI value replaces the maker's edit.
        p.apply_ai(DraftField::Tagline, proposal("Acme", "Acme builds"), &site());
        p.set_by_user(DraftField::Tagline, FieldValue::Text("Cat rockets".into())).unwrap();
        assert!(p.regenerate(DraftField::Tagline, fresh(), &site()));
        assert_eq!(p.field(DraftField::Tagline).value, Some(FieldValue::Text("Rockets for cats".into())));
        assert_eq!(p.field(DraftField::Tagline).state, FieldState::Ai);
        // Manual, and the site does not state it: the field becomes not found.
        p.set_by_user(DraftField::City, FieldValue::Text("Cork".into())).unwrap();
        assert_eq!(p.field(DraftField::City).state, FieldState::Manual);
        assert!(!p.regenerate(DraftField::City, None, &site()));
        assert_eq!(p.field(DraftField::City).value, None);
        assert_eq!(p.field(DraftField::City).state, FieldState::NotFound);
        // Deleted: regenerating brings the value back.
        p.remove(DraftField::Tagline);
        p.regenerate(DraftField::Tagline, fresh(), &site());
        assert_eq!(p.field(DraftField::Tagline).state, FieldState::Ai);
        // Locked: kept (the operation answers 400 before this; the domain holds the line too).
        p.set_by_user(DraftField::Tagline, FieldValue::Text("Mine".into())).unwrap();
        p.lock(DraftField::Tagline);
        p.regenerate(DraftField::Tagline, fresh(), &site());
        assert_eq!(p.field(DraftField::Tagline).value, Some(FieldValue::Text("Mine".into())));
        assert_eq!(p.field(DraftField::Tagline).state, FieldState::Override);
        // A full redraft still leaves a maker's edit alone.
        p.set_by_user(DraftField::ShortDescription, FieldValue::Text("Ours".into())).unwrap();
        p.apply_ai(DraftField::ShortDescription, proposal("Acme builds", "Acme builds"), &site());
        assert_eq!(p.field(DraftField::ShortDescription).value, Some(FieldValue::Text("Ours".into())));
    }

    #[test]
    fn field_bounds_follow_the_table() {
        let long = |n| FieldValue::Text("x".repeat(n));
        assert!(long(500).check(DraftField::Name).is_ok());
        assert_eq!(long(501).check(DraftField::Name).unwrap_err().field, "fields.name");
        assert!(long(20000).check(DraftField::Description).is_ok());
        assert!(long(20001).check(DraftField::Description).is_err());
        let list = |n, each| FieldValue::List(vec!["y".repeat(each); n]);
        assert!(list(20, 200).check(DraftField::Tags).is_ok());
        assert!(list(21, 1).check(DraftField::Tags).is_err());
        assert_eq!(list(1, 201).check(DraftField::Features).unwrap_err().field, "fields.features[0]");
        assert!(FieldValue::Text("a".into()).check(DraftField::Keywords).is_err());
    }

    #[test]
    fn draft_status_machine() {
        let mut s = DraftStatus::Crawling;
        assert!(s.drafted().is_err());
        s.crawled().unwrap();
        s.drafted().unwrap();
        assert!(s.is_ready());
        assert_eq!(s.fail("late").unwrap_err().current, "ready");
        let mut f = DraftStatus::Crawling;
        f.fail("robots.txt forbids us").unwrap();
        assert_eq!(f.as_str(), "failed");
        f.retry().unwrap();
        assert_eq!(f, DraftStatus::Crawling);
    }

    #[test]
    fn completeness_counts_filled_fields() {
        let mut p = DraftProfile::default();
        assert_eq!(p.completeness(), 0);
        assert_eq!(p.missing().len(), 18);
        p.set_by_user(DraftField::Name, FieldValue::Text("Acme".into())).unwrap();
        assert_eq!(p.completeness(), 5);
    }

    proptest! {
        #[test]
        fn accepted_values_always_have_verbatim_evidence(quote in "[a-z ]{0,20}", value in "[a-z]{1,10}") {
            let site = site();
            let mut p = DraftProfile::default();
            let accepted = p.apply_ai(DraftField::Tagline, proposal(&value, &quote), &site);
            let q = normalize_whitespace(&quote);
            let in_site = !q.is_empty() && normalize_whitespace("Acme   builds\nrockets for cats.\nFounded in Cork.").contains(&q);
            prop_assert_eq!(accepted, in_site);
            prop_assert_eq!(p.field(DraftField::Tagline).value.is_some(), in_site);
        }
    }
}
