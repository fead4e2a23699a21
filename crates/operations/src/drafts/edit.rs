//! update_draft's body: every key of the spec's table with its bounds (declared in the schema and
//! enforced by the domain), unknown keys refused, and how each key changes the draft.

use domain::ValidationErrors;
use domain::draft::{Competitor, Draft, DraftFaq, DraftField, DraftFounder, FieldValue, Seo, SiteUrl, limits};
use domain::founder::FounderEntry;
use domain::sections::{Milestone, Story};
use domain::social::{Faq, Socials};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Present-and-null (`Some(None)`) apart from absent (`None`).
pub(crate) fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

// The bound is set from the domain's table where the item is used (update_draft, update_my_listing).
/// A list item of at most 200 characters.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // a schema type only: the value arrives as a String
pub struct Item200(String);

macro_rules! draft_fields {
    ($( $(#[$doc:meta])* $name:ident : text ),* ; $( $(#[$ldoc:meta])* $lname:ident : list ),* ) => {
        /// The draft's editable fields; null removes a field. No other keys are allowed.
        #[derive(Debug, Default, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct DraftFieldsInput {
            $(
                $(#[$doc])*
                #[serde(default, deserialize_with = "nullable")]
                #[schema(value_type = Option<String>)]
                pub $name: Option<Option<String>>,
            )*
            $(
                $(#[$ldoc])*
                #[serde(default, deserialize_with = "nullable")]
                #[schema(inline, value_type = Option<Vec<Item200>>)]
                pub $lname: Option<Option<Vec<String>>>,
            )*
        }

        impl DraftFieldsInput {
            /// Only the field called `name` set to `value` (`None` removes it); `None` when no field
            /// has that name. For a form that edits one field at a time.
            pub fn one(name: &str, value: Option<FieldValue>) -> Option<Self> {
                let mut out = Self::default();
                match name {
                    $(
                        stringify!($name) => out.$name = Some(value.map(|v| match v {
                            FieldValue::Text(t) => t,
                            FieldValue::List(items) => items.join("\n"),
                        })),
                    )*
                    $(
                        stringify!($lname) => out.$lname = Some(value.map(|v| match v {
                            FieldValue::Text(t) => vec![t],
                            FieldValue::List(items) => items,
                        })),
                    )*
                    _ => return None,
                }
                Some(out)
            }

            /// Whether the field called `name` holds a list.
            pub fn is_list(name: &str) -> bool {
                [$( stringify!($lname) ),*].contains(&name)
            }

            /// Each key sent: the field and its new value (`None` = remove).
            pub fn changes(self) -> Vec<(DraftField, Option<FieldValue>)> {
                let mut out = Vec::new();
                $(
                    if let Some(v) = self.$name {
                        out.push((field(stringify!($name)), v.map(FieldValue::Text)));
                    }
                )*
                $(
                    if let Some(v) = self.$lname {
                        out.push((field(stringify!($lname)), v.map(FieldValue::List)));
                    }
                )*
                out
            }
        }
    };
}

fn field(name: &str) -> DraftField {
    // The macro's names are the spec's field names, each one a DraftField (checked by a test).
    DraftField::parse(name, "fields").unwrap_or(DraftField::Name)
}

draft_fields! {
    name: text,
    tagline: text,
    short_description: text,
    description: text,
    stage: text,
    pricing_model: text,
    pricing_summary: text,
    /// An ISO 3166-1 country code (checked when the draft is saved as a listing).
    country: text,
    city: text,
    /// A year (checked when the draft is saved as a listing).
    founded_year: text,
    contact_email: text,
    /// A link to a video site.
    demo_video_url: text,
    logo_url: text;
    /// Names from list_categories; the first is the primary category.
    categories: list,
    tags: list,
    features: list,
    usps: list,
    keywords: list
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FaqInput {
    pub question: String,
    pub answer: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FounderInput {
    pub name: String,
    /// The role.
    pub title: Option<String>,
    pub bio: Option<String>,
}

impl FaqInput {
    /// The bounds of an FAQ at `path`, from the domain's types.
    pub(crate) fn bounds(schema: &mut serde_json::Value, path: &[&str]) {
        use crate::refine::{text, under};
        text::<domain::social::FaqQuestion>(schema, &under(path, &["question"]));
        text::<domain::social::FaqAnswer>(schema, &under(path, &["answer"]));
    }
}

impl FounderInput {
    pub(crate) fn bounds(schema: &mut serde_json::Value, path: &[&str]) {
        use crate::refine::{text, under};
        text::<domain::founder::FounderName>(schema, &under(path, &["name"]));
        text::<domain::founder::FounderTitle>(schema, &under(path, &["title"]));
        text::<domain::founder::FounderBio>(schema, &under(path, &["bio"]));
    }
}

/// A milestone input type (date and title required), after any extra fields given (a path parameter).
macro_rules! milestone_input {
    ($(#[$doc:meta])* $name:ident $(, $(#[$fmeta:meta])* $extra:ident : $ety:ty)*) => {
        $(#[$doc])*
        #[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( $(#[$fmeta])* pub $extra: $ety, )*
            /// YYYY-MM-DD.
            #[schema(format = Date)]
            pub date: String,
            pub title: String,
            pub description: Option<String>,
            /// An https link.
            #[schema(pattern = "^https://")]
            pub url: Option<String>,
        }

        impl $name {
            /// The bounds of a milestone at `path`, from the domain's types.
            #[allow(dead_code)] // each expansion has it; not every one is used
            pub(crate) fn bounds(schema: &mut serde_json::Value, path: &[&str]) {
                use crate::refine::{set, text, under};
                use domain::sections::Milestone;
                set(schema, &under(path, &["date"]), "maxLength", Milestone::DATE_LEN.into());
                text::<domain::sections::MilestoneTitle>(schema, &under(path, &["title"]));
                text::<domain::sections::MilestoneDescription>(schema, &under(path, &["description"]));
                set(schema, &under(path, &["url"]), "maxLength", Milestone::MAX_URL.into());
            }

            /// The milestone, its bounds checked.
            pub(crate) fn parse(self) -> Result<domain::sections::Milestone, domain::ValidationError> {
                domain::sections::Milestone::parse(&self.date, self.title, self.description, self.url)
            }
        }
    };
}
pub(crate) use milestone_input;

milestone_input!(MilestoneInput);

/// A story input type: the nine sections, the title bounded by `$title_max`, every other section by
/// 8000, after any extra fields given (a path parameter).
macro_rules! story_input {
    ($(#[$doc:meta])* $name:ident, $title_max:expr $(, $(#[$fmeta:meta])* $extra:ident : $ety:ty)*) => {
        $(#[$doc])*
        #[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( $(#[$fmeta])* pub $extra: $ety, )*
            pub title: Option<String>,
            pub story: Option<String>,
            pub why_started: Option<String>,
            pub problem: Option<String>,
            pub journey: Option<String>,
            pub challenges: Option<String>,
            pub achievements: Option<String>,
            pub lessons: Option<String>,
            pub whats_next: Option<String>,
        }

        impl $name {
            /// The bounds of the sections at `path`: the title's for this input, every other section's
            /// from the domain.
            pub(crate) fn bounds(schema: &mut serde_json::Value, path: &[&str]) {
                use crate::refine::{set, under};
                use domain::sections::Story;
                set(schema, &under(path, &["title"]), "maxLength", ($title_max).into());
                for section in ["story", "why_started", "problem", "journey", "challenges", "achievements", "lessons", "whats_next"] {
                    set(schema, &under(path, &[section]), "maxLength", Story::MAX_SECTION.into());
                }
            }

            /// These sections filled by `get` (each section's name to its text, `None` for none), the
            /// other fields kept: how a form with one input per section builds this input.
            // `..self` keeps the extra fields; an input without any has nothing left for it to keep.
            #[allow(clippy::needless_update)]
            pub fn with_sections(self, get: impl Fn(&str) -> Option<String>) -> Self {
                Self {
                    title: get("title"),
                    story: get("story"),
                    why_started: get("why_started"),
                    problem: get("problem"),
                    journey: get("journey"),
                    challenges: get("challenges"),
                    achievements: get("achievements"),
                    lessons: get("lessons"),
                    whats_next: get("whats_next"),
                    ..self
                }
            }

            /// The sections sent, by name.
            pub(crate) fn sections(self) -> Vec<(String, String)> {
                [
                    ("title", self.title),
                    ("story", self.story),
                    ("why_started", self.why_started),
                    ("problem", self.problem),
                    ("journey", self.journey),
                    ("challenges", self.challenges),
                    ("achievements", self.achievements),
                    ("lessons", self.lessons),
                    ("whats_next", self.whats_next),
                ]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
                .collect()
            }
        }
    };
}
pub(crate) use story_input;

story_input!(
    /// Story sections, each at most 8000 characters.
    StoryInput,
    domain::sections::Story::MAX_SECTION
);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeoInput {
    pub title: Option<String>,
    pub meta: Option<String>,
}

/// A field name in lock_fields, regenerate or restore.
#[derive(Debug, ToSchema)]
#[schema(max_length = 40)]
#[allow(dead_code)] // a schema type only: the value arrives as a String
pub struct FieldName(String);

/// Social links by platform (linkedin, x, facebook, instagram, tiktok, youtube, threads, pinterest,
/// github, reddit, producthunt, medium, website, custom), each at most 500 characters.
#[derive(Debug, ToSchema)]
#[schema(pattern = "^https?://")]
#[allow(dead_code)] // a schema type only: the value arrives as a String; its bound is set with the map's
pub struct Link500(String);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDraftInput {
    /// The draft's id.
    #[schema(format = Uuid)]
    pub id: String,
    #[schema(inline)]
    pub fields: Option<DraftFieldsInput>,
    /// Fields to lock against redrafts (state override).
    #[schema(inline, value_type = Option<Vec<FieldName>>)]
    pub lock_fields: Option<Vec<String>>,
    /// Fields the service redrafts from the website (a few seconds; poll get_draft). Locked fields are
    /// refused.
    #[schema(inline, value_type = Option<Vec<FieldName>>)]
    pub regenerate: Option<Vec<String>>,
    /// Fields returned to the service's own value (unlocks them).
    #[schema(inline, value_type = Option<Vec<FieldName>>)]
    pub restore: Option<Vec<String>>,
    /// Replaces all FAQs.
    #[schema(inline)]
    pub faqs: Option<Vec<FaqInput>>,
    #[schema(inline, value_type = Option<BTreeMap<String, Link500>>)]
    pub company_socials: Option<BTreeMap<String, String>>,
    #[schema(inline, value_type = Option<BTreeMap<String, Link500>>)]
    pub founder_socials: Option<BTreeMap<String, String>>,
    /// Replaces the founders; the first is the primary founder.
    #[schema(inline)]
    pub founders: Option<Vec<FounderInput>>,
    #[schema(inline)]
    pub story: Option<StoryInput>,
    /// Replaces the milestones.
    #[schema(inline)]
    pub milestones: Option<Vec<MilestoneInput>>,
    /// A competitor's website: read the same safe way and compared; an empty string clears it.
    pub competitor_url: Option<String>,
    #[schema(inline)]
    pub seo: Option<SeoInput>,
}

fn names(errs: &mut ValidationErrors, key: &str, raw: Option<Vec<String>>, max: usize) -> Vec<DraftField> {
    let Some(raw) = raw else { return vec![] };
    if raw.len() > max {
        errs.push(domain::ValidationError::new(key, format!("more than {max} items")));
        return vec![];
    }
    let mut out = Vec::new();
    for (i, n) in raw.iter().enumerate() {
        if let Some(f) = errs.take(DraftField::parse(n, &format!("{key}[{i}]")))
            && !out.contains(&f)
        {
            out.push(f);
        }
    }
    out
}

/// What update_draft asked for, checked; applying it cannot fail.
#[derive(Debug, Default)]
pub struct DraftEdit {
    pub fields: Vec<(DraftField, Option<FieldValue>)>,
    pub lock: Vec<DraftField>,
    pub regenerate: Vec<DraftField>,
    pub restore: Vec<DraftField>,
    pub faqs: Option<Vec<Faq>>,
    pub company_socials: Option<Socials>,
    pub founder_socials: Option<Socials>,
    pub founders: Option<Vec<FounderEntry>>,
    pub story: Option<Story>,
    pub milestones: Option<Vec<Milestone>>,
    /// `Some(None)` clears the competitor.
    pub competitor: Option<Option<SiteUrl>>,
    pub seo: Option<Seo>,
}

impl DraftEdit {
    /// Checks every key, collecting every problem. `category_name` maps a name or slug the user sent
    /// to the category's name, or `None` when there is no such category.
    pub fn parse(
        input: UpdateDraftInput,
        category_name: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ValidationErrors> {
        let mut errs = ValidationErrors::default();
        let mut edit = DraftEdit::default();
        for (f, v) in input.fields.map(DraftFieldsInput::changes).unwrap_or_default() {
            let v = match v {
                Some(FieldValue::List(items)) if f == DraftField::Categories => {
                    let mut names = Vec::new();
                    for (i, c) in items.iter().enumerate() {
                        match category_name(c) {
                            Some(n) if !names.contains(&n) => names.push(n),
                            Some(_) => {}
                            None => errs.push(domain::ValidationError::new(
                                format!("fields.categories[{i}]"),
                                "is not a category; use a name from list_categories",
                            )),
                        }
                    }
                    if items.len() > 20 {
                        errs.push(domain::ValidationError::new("fields.categories", "more than 20 items"));
                    }
                    Some(FieldValue::List(names))
                }
                other => other,
            };
            if let Some(v) = &v {
                errs.take(v.check(f));
            }
            edit.fields.push((f, v));
        }
        edit.lock = names(&mut errs, "lock_fields", input.lock_fields, limits::LOCK_FIELDS);
        edit.regenerate = names(&mut errs, "regenerate", input.regenerate, limits::REGENERATE);
        edit.restore = names(&mut errs, "restore", input.restore, limits::RESTORE);
        if let Some(faqs) = input.faqs {
            edit.faqs = errs.take(Faq::parse_list("faqs", faqs.into_iter().map(|f| (f.question, f.answer)).collect()));
        }
        if let Some(s) = input.company_socials {
            edit.company_socials = errs.take(Socials::parse("company_socials", s));
        }
        if let Some(s) = input.founder_socials {
            edit.founder_socials = errs.take(Socials::parse("founder_socials", s));
        }
        if let Some(fs) = input.founders {
            if fs.len() > limits::FOUNDERS {
                errs.push(domain::ValidationError::new("founders", format!("more than {} items", limits::FOUNDERS)));
            } else {
                let parsed: Vec<Option<FounderEntry>> = fs
                    .into_iter()
                    .enumerate()
                    .map(|(i, f)| {
                        errs.take(
                            FounderEntry::parse(f.name, f.title, f.bio)
                                .map_err(|e| e.within(&format!("founders[{i}]"))),
                        )
                    })
                    .collect();
                edit.founders = parsed.into_iter().collect();
            }
        }
        if let Some(s) = input.story {
            edit.story = errs.take(Story::parse("story", s.sections(), Story::MAX_SECTION));
        }
        if let Some(ms) = input.milestones {
            if ms.len() > limits::MILESTONES {
                errs.push(domain::ValidationError::new(
                    "milestones",
                    format!("more than {} items", limits::MILESTONES),
                ));
            } else {
                let parsed: Vec<Option<Milestone>> = ms
                    .into_iter()
                    .enumerate()
                    .map(|(i, m)| errs.take(m.parse().map_err(|e| e.within(&format!("milestones[{i}]")))))
                    .collect();
                edit.milestones = parsed.into_iter().collect();
            }
        }
        if let Some(url) = input.competitor_url {
            edit.competitor =
                if url.is_empty() { Some(None) } else { errs.take(SiteUrl::parse("competitor_url", &url)).map(Some) };
        }
        if let Some(seo) = input.seo {
            edit.seo = errs.take(Seo::parse(seo.title, seo.meta));
        }
        errs.into_result().map(|()| edit)
    }

    /// Applies the edit to the draft, in the order fields → restore → lock; regenerate and the
    /// competitor are queued by the caller.
    pub fn apply(&self, d: &mut Draft) {
        for (f, v) in &self.fields {
            match v {
                // Checked in parse; set_by_user re-checks and cannot fail here.
                Some(v) => drop(d.profile.set_by_user(*f, v.clone())),
                None => d.profile.remove(*f),
            }
        }
        for f in &self.restore {
            d.profile.restore(*f);
        }
        for f in &self.lock {
            d.profile.lock(*f);
        }
        let x = &mut d.extras;
        if let Some(faqs) = &self.faqs {
            x.faqs = faqs.iter().map(|f| DraftFaq { faq: f.clone(), evidence: vec![] }).collect();
            x.faqs_by_user = true;
        }
        if let Some(s) = &self.company_socials {
            x.company_socials = s.clone();
            x.company_socials_by_user = true;
        }
        if let Some(s) = &self.founder_socials {
            x.founder_socials = s.clone();
        }
        if let Some(fs) = &self.founders {
            x.founders = fs.iter().map(|f| DraftFounder { founder: f.clone(), evidence: vec![] }).collect();
            x.founders_by_user = true;
        }
        if let Some(s) = &self.story {
            x.story = s.clone();
        }
        if let Some(ms) = &self.milestones {
            x.milestones = ms.clone();
        }
        if let Some(seo) = &self.seo {
            x.seo = seo.clone();
        }
        match &self.competitor {
            Some(Some(url)) => x.competitor = Some(Competitor::reading(url.as_str().to_owned())),
            Some(None) => x.competitor = None,
            None => {}
        }
        for f in &self.regenerate {
            if !x.regenerating.contains(f) {
                x.regenerating.push(*f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_key_is_a_draft_field() {
        let all: Vec<&str> = DraftField::ALL.iter().map(|f| f.as_str()).collect();
        let schema = serde_json::to_value(<DraftFieldsInput as utoipa::PartialSchema>::schema()).unwrap();
        let mut keys: Vec<&str> = schema["properties"].as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut want = all.clone();
        want.sort_unstable();
        assert_eq!(keys, want);
        for f in all {
            assert_eq!(field(f).as_str(), f);
        }
    }
}
