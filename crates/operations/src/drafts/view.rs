//! How a draft is shown: every profile field with its value, state and evidence, then FAQs, founders,
//! socials, story, milestones, SEO, the competitor comparison, completeness and what is missing.

use crate::public::Pagination;
use domain::draft::{CompetitorStatus, Draft, DraftField, DraftStatus, Evidence, FieldState, FieldValue};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// A verbatim quote from the page at `url`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EvidenceOut {
    pub quote: String,
    pub url: String,
}

/// A field value: a string, or a list of strings for list fields.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ValueOut {
    Text(String),
    List(Vec<String>),
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FieldOut {
    /// null when blank.
    pub value: Option<ValueOut>,
    /// ai (drafted from the site), not_found (the site does not state it), edited (the user changed the
    /// drafted value), manual (the user filled a blank), override (locked against redrafts), deleted
    /// (removed by the user).
    pub state: String,
    /// Quotes from the site backing an `ai` value; empty for the user's own values.
    pub evidence: Vec<EvidenceOut>,
    /// Whether the service has its own value to `restore`.
    pub ai_value_available: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DraftFaqOut {
    pub question: String,
    pub answer: String,
    pub evidence: Vec<EvidenceOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FounderOut {
    pub name: String,
    pub title: String,
    pub bio: String,
    pub evidence: Vec<EvidenceOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DraftMilestoneOut {
    pub date: String,
    pub title: String,
    pub description: String,
    pub url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SeoOut {
    pub title: String,
    pub meta: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ComparisonRowOut {
    pub field: String,
    pub ours: Option<ValueOut>,
    pub theirs: Option<ValueOut>,
    pub their_evidence: Vec<EvidenceOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompetitorOut {
    pub url: String,
    /// reading, ready or failed.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Our value and theirs per compared field; a blank cell means that site does not state it.
    pub rows: Vec<ComparisonRowOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DraftOut {
    /// The draft's id (uuid).
    pub id: String,
    pub url: String,
    /// crawling → drafting → ready; or failed, with `failure_reason`.
    pub status: String,
    /// Why drafting failed, for a person (site unreachable, robots.txt forbids us, not HTML, too large).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// The listing submit_draft saved from this draft; later edits flow into it.
    pub listing_id: Option<i64>,
    /// Percentage (0–100) of profile fields with a value.
    pub completeness: u8,
    /// Profile fields still without a value.
    pub missing: Vec<String>,
    /// Facts the site did not state, left blank on purpose.
    pub not_found_on_website: Vec<String>,
    /// Fields a regenerate is redrafting now.
    pub regenerating: Vec<String>,
    /// Every editable field by name.
    pub fields: BTreeMap<String, FieldOut>,
    pub faqs: Vec<DraftFaqOut>,
    pub founders: Vec<FounderOut>,
    pub company_socials: BTreeMap<String, String>,
    pub founder_socials: BTreeMap<String, String>,
    pub story: BTreeMap<String, String>,
    pub milestones: Vec<DraftMilestoneOut>,
    pub seo: SeoOut,
    pub competitor: Option<CompetitorOut>,
    pub created_at: String,
    pub updated_at: String,
}

fn ev(e: &[Evidence]) -> Vec<EvidenceOut> {
    e.iter().map(|e| EvidenceOut { quote: e.quote.clone(), url: e.url.clone() }).collect()
}

fn value(v: &Option<FieldValue>) -> Option<ValueOut> {
    v.as_ref().map(|v| match v {
        FieldValue::Text(s) => ValueOut::Text(s.clone()),
        FieldValue::List(l) => ValueOut::List(l.clone()),
    })
}

fn names(fs: &[DraftField]) -> Vec<String> {
    fs.iter().map(|f| f.as_str().to_owned()).collect()
}

impl From<&Draft> for DraftOut {
    fn from(d: &Draft) -> Self {
        let x = &d.extras;
        Self {
            id: d.id.to_string(),
            url: d.url.clone(),
            status: d.status().as_str().to_owned(),
            failure_reason: match d.status() {
                DraftStatus::Failed { reason } => Some(reason.clone()),
                _ => None,
            },
            listing_id: d.listing_id.map(|l| l.get()),
            completeness: d.profile.completeness(),
            missing: names(&d.profile.missing()),
            not_found_on_website: names(&d.profile.not_found()),
            regenerating: names(&x.regenerating),
            fields: d
                .profile
                .entries()
                .map(|(f, e)| {
                    (
                        f.as_str().to_owned(),
                        FieldOut {
                            value: value(&e.value),
                            state: e.state.as_str().to_owned(),
                            evidence: if e.state == FieldState::Ai || e.state == FieldState::Override {
                                ev(&e.evidence)
                            } else {
                                vec![]
                            },
                            ai_value_available: e.ai_value.is_some(),
                        },
                    )
                })
                .collect(),
            faqs: x
                .faqs
                .iter()
                .map(|f| DraftFaqOut {
                    question: f.faq.question.as_str().to_owned(),
                    answer: f.faq.answer.as_str().to_owned(),
                    evidence: ev(&f.evidence),
                })
                .collect(),
            founders: x
                .founders
                .iter()
                .map(|f| FounderOut {
                    name: f.founder.name.as_str().to_owned(),
                    title: f.founder.title.as_str().to_owned(),
                    bio: f.founder.bio.as_str().to_owned(),
                    evidence: ev(&f.evidence),
                })
                .collect(),
            company_socials: x.company_socials.clone().into_inner(),
            founder_socials: x.founder_socials.clone().into_inner(),
            story: x.story.sections().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
            milestones: x
                .milestones
                .iter()
                .map(|m| DraftMilestoneOut {
                    date: m.date.format("%Y-%m-%d").to_string(),
                    title: m.title.as_str().to_owned(),
                    description: m.description.as_str().to_owned(),
                    url: m.url.clone(),
                })
                .collect(),
            seo: SeoOut { title: x.seo.title.clone(), meta: x.seo.meta.clone() },
            competitor: x.competitor.as_ref().map(|c| CompetitorOut {
                url: c.url.clone(),
                status: c.status().as_str().to_owned(),
                failure_reason: match c.status() {
                    CompetitorStatus::Failed { reason } => Some(reason.clone()),
                    _ => None,
                },
                rows: c
                    .rows
                    .iter()
                    .map(|r| ComparisonRowOut {
                        field: r.field.as_str().to_owned(),
                        ours: value(&r.ours),
                        theirs: value(&r.theirs),
                        their_evidence: ev(&r.their_evidence),
                    })
                    .collect(),
            }),
            created_at: d.created_at.to_rfc3339(),
            updated_at: d.updated_at.to_rfc3339(),
        }
    }
}

/// A draft in the list of the caller's drafts.
#[derive(Debug, Serialize, ToSchema)]
pub struct DraftSummaryOut {
    pub id: String,
    pub url: String,
    /// The drafted or edited name, when there is one.
    pub name: Option<String>,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    pub completeness: u8,
    pub listing_id: Option<i64>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&Draft> for DraftSummaryOut {
    fn from(d: &Draft) -> Self {
        Self {
            id: d.id.to_string(),
            url: d.url.clone(),
            name: match &d.profile.field(DraftField::Name).value {
                Some(FieldValue::Text(s)) => Some(s.clone()),
                _ => None,
            },
            status: d.status().as_str().to_owned(),
            failure_reason: match d.status() {
                DraftStatus::Failed { reason } => Some(reason.clone()),
                _ => None,
            },
            completeness: d.profile.completeness(),
            listing_id: d.listing_id.map(|l| l.get()),
            created_at: d.created_at.to_rfc3339(),
            updated_at: d.updated_at.to_rfc3339(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DraftPage {
    pub items: Vec<DraftSummaryOut>,
    pub pagination: Pagination,
}
