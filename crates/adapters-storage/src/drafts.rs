//! Drafts, their co-founder invites, and the email outbox. A draft's profile and extras are one JSON
//! document each (text on both databases); `version` makes every save a compare-and-set, so the
//! background drafter and the user's edits never overwrite each other.

use crate::entity::{draft_invites, drafts, listing_categories, listing_owners, listings, outbox};
use crate::listings::{active_model, category_rows};
use crate::store::{SeaOrmStore, is_unique_violation, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, FixedOffset, Utc};
use domain::draft::{
    ComparisonRow, Competitor, CompetitorStatus, Draft, DraftExtras, DraftFaq, DraftField, DraftFieldEntry,
    DraftFounder, DraftProfile, DraftRecord, DraftStatus, Evidence, FieldState, FieldValue, Seo,
};
use domain::founder::FounderEntry;
use domain::ids::{DraftId, ListingId, UserId};
use domain::listing::NewListing;
use domain::paging::{PageRequest, Paged};
use domain::ports::{DraftRepository, Invite, Outbox, OutboxEmail, RepoError, RepoResult};
use domain::sections::{Milestone, Story};
use domain::social::{Faq, Socials};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
    TransactionTrait,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn ts(t: DateTime<Utc>) -> DateTime<FixedOffset> {
    t.into()
}

// ---- the stored JSON shapes (private: the domain types stay free of serde) ----

#[derive(Serialize, Deserialize, Default)]
struct EvidenceJson {
    quote: String,
    #[serde(default)]
    url: String,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum ValueJson {
    Text(String),
    List(Vec<String>),
}

#[derive(Serialize, Deserialize)]
struct FieldJson {
    #[serde(default)]
    value: Option<ValueJson>,
    state: String,
    #[serde(default)]
    evidence: Vec<EvidenceJson>,
    #[serde(default)]
    ai_value: Option<ValueJson>,
    #[serde(default)]
    ai_evidence: Vec<EvidenceJson>,
}

#[derive(Serialize, Deserialize, Default)]
struct FaqJson {
    question: String,
    answer: String,
    #[serde(default)]
    evidence: Vec<EvidenceJson>,
}

#[derive(Serialize, Deserialize, Default)]
struct FounderJson {
    name: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    bio: String,
    #[serde(default)]
    evidence: Vec<EvidenceJson>,
}

#[derive(Serialize, Deserialize, Default)]
struct MilestoneJson {
    date: String,
    title: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    url: String,
}

#[derive(Serialize, Deserialize)]
struct RowJson {
    field: String,
    ours: Option<ValueJson>,
    theirs: Option<ValueJson>,
    #[serde(default)]
    their_evidence: Vec<EvidenceJson>,
}

#[derive(Serialize, Deserialize)]
struct CompetitorJson {
    url: String,
    status: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    rows: Vec<RowJson>,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct ExtrasJson {
    faqs: Vec<FaqJson>,
    faqs_by_user: bool,
    founders: Vec<FounderJson>,
    founders_by_user: bool,
    company_socials: BTreeMap<String, String>,
    company_socials_by_user: bool,
    founder_socials: BTreeMap<String, String>,
    story: BTreeMap<String, String>,
    milestones: Vec<MilestoneJson>,
    seo_title: String,
    seo_meta: String,
    competitor: Option<CompetitorJson>,
    regenerating: Vec<String>,
}

fn ev_out(e: &[Evidence]) -> Vec<EvidenceJson> {
    e.iter().map(|e| EvidenceJson { quote: e.quote.clone(), url: e.url.clone() }).collect()
}

fn ev_in(e: Vec<EvidenceJson>) -> Vec<Evidence> {
    e.into_iter().map(|e| Evidence { quote: e.quote, url: e.url }).collect()
}

fn value_out(v: &Option<FieldValue>) -> Option<ValueJson> {
    v.as_ref().map(|v| match v {
        FieldValue::Text(s) => ValueJson::Text(s.clone()),
        FieldValue::List(l) => ValueJson::List(l.clone()),
    })
}

fn value_in(v: Option<ValueJson>) -> Option<FieldValue> {
    v.map(|v| match v {
        ValueJson::Text(s) => FieldValue::Text(s),
        ValueJson::List(l) => FieldValue::List(l),
    })
}

fn profile_to_json(p: &DraftProfile) -> String {
    let map: BTreeMap<&str, FieldJson> = p
        .entries()
        .map(|(f, e)| {
            (
                f.as_str(),
                FieldJson {
                    value: value_out(&e.value),
                    state: e.state.as_str().to_owned(),
                    evidence: ev_out(&e.evidence),
                    ai_value: value_out(&e.ai_value),
                    ai_evidence: ev_out(&e.ai_evidence),
                },
            )
        })
        .collect();
    serde_json::to_string(&map).unwrap_or_else(|_| "{}".into())
}

fn profile_from_json(raw: &str) -> DraftProfile {
    let map: BTreeMap<String, FieldJson> = serde_json::from_str(raw).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "unreadable draft profile");
        BTreeMap::new()
    });
    DraftProfile::from_entries(map.into_iter().filter_map(|(name, f)| {
        let field = DraftField::parse(&name, "profile").ok()?;
        Some((
            field,
            DraftFieldEntry {
                value: value_in(f.value),
                state: FieldState::parse(&f.state).unwrap_or(FieldState::NotFound),
                evidence: ev_in(f.evidence),
                ai_value: value_in(f.ai_value),
                ai_evidence: ev_in(f.ai_evidence),
            },
        ))
    }))
}

fn extras_to_json(x: &DraftExtras) -> String {
    let j = ExtrasJson {
        faqs: x
            .faqs
            .iter()
            .map(|f| FaqJson {
                question: f.faq.question.as_str().to_owned(),
                answer: f.faq.answer.as_str().to_owned(),
                evidence: ev_out(&f.evidence),
            })
            .collect(),
        faqs_by_user: x.faqs_by_user,
        founders: x
            .founders
            .iter()
            .map(|f| FounderJson {
                name: f.founder.name.as_str().to_owned(),
                title: f.founder.title.as_str().to_owned(),
                bio: f.founder.bio.as_str().to_owned(),
                evidence: ev_out(&f.evidence),
            })
            .collect(),
        founders_by_user: x.founders_by_user,
        company_socials: x.company_socials.clone().into_inner(),
        company_socials_by_user: x.company_socials_by_user,
        founder_socials: x.founder_socials.clone().into_inner(),
        story: x.story.sections().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
        milestones: x
            .milestones
            .iter()
            .map(|m| MilestoneJson {
                date: m.date.format("%Y-%m-%d").to_string(),
                title: m.title.as_str().to_owned(),
                description: m.description.as_str().to_owned(),
                url: m.url.clone(),
            })
            .collect(),
        seo_title: x.seo.title.clone(),
        seo_meta: x.seo.meta.clone(),
        competitor: x.competitor.as_ref().map(|c| CompetitorJson {
            url: c.url.clone(),
            status: c.status().as_str().to_owned(),
            reason: match c.status() {
                CompetitorStatus::Failed { reason } => Some(reason.clone()),
                _ => None,
            },
            rows: c
                .rows
                .iter()
                .map(|r| RowJson {
                    field: r.field.as_str().to_owned(),
                    ours: value_out(&r.ours),
                    theirs: value_out(&r.theirs),
                    their_evidence: ev_out(&r.their_evidence),
                })
                .collect(),
        }),
        regenerating: x.regenerating.iter().map(|f| f.as_str().to_owned()).collect(),
    };
    serde_json::to_string(&j).unwrap_or_else(|_| "{}".into())
}

/// Stored extras were validated on the way in; anything that no longer parses is dropped (and logged)
/// rather than failing the read.
fn extras_from_json(raw: &str) -> DraftExtras {
    let j: ExtrasJson = serde_json::from_str(raw).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "unreadable draft extras");
        ExtrasJson::default()
    });
    DraftExtras {
        faqs: j
            .faqs
            .into_iter()
            .filter_map(|f| Some(DraftFaq { faq: Faq::parse(f.question, f.answer).ok()?, evidence: ev_in(f.evidence) }))
            .collect(),
        faqs_by_user: j.faqs_by_user,
        founders: j
            .founders
            .into_iter()
            .filter_map(|f| {
                Some(DraftFounder {
                    founder: FounderEntry::parse(f.name, Some(f.title), Some(f.bio)).ok()?,
                    evidence: ev_in(f.evidence),
                })
            })
            .collect(),
        founders_by_user: j.founders_by_user,
        company_socials: Socials::parse("company_socials", j.company_socials).unwrap_or_default(),
        company_socials_by_user: j.company_socials_by_user,
        founder_socials: Socials::parse("founder_socials", j.founder_socials).unwrap_or_default(),
        story: Story::parse("story", j.story, Story::MAX_SECTION).unwrap_or_default(),
        milestones: j
            .milestones
            .into_iter()
            .filter_map(|m| {
                Milestone::parse(&m.date, m.title, Some(m.description), Some(m.url).filter(|u| !u.is_empty())).ok()
            })
            .collect(),
        seo: Seo { title: j.seo_title, meta: j.seo_meta },
        competitor: j.competitor.map(|c| {
            let status = match c.status.as_str() {
                "ready" => CompetitorStatus::Ready,
                "failed" => CompetitorStatus::Failed { reason: c.reason.unwrap_or_default() },
                _ => CompetitorStatus::Reading,
            };
            let rows = c
                .rows
                .into_iter()
                .filter_map(|r| {
                    Some(ComparisonRow {
                        field: DraftField::parse(&r.field, "competitor").ok()?,
                        ours: value_in(r.ours),
                        theirs: value_in(r.theirs),
                        their_evidence: ev_in(r.their_evidence),
                    })
                })
                .collect();
            Competitor::from_parts(c.url, status, rows)
        }),
        regenerating: j.regenerating.iter().filter_map(|f| DraftField::parse(f, "regenerating").ok()).collect(),
    }
}

fn status_out(s: &DraftStatus) -> (String, Option<String>) {
    let reason = match s {
        DraftStatus::Failed { reason } => Some(reason.clone()),
        _ => None,
    };
    (s.as_str().to_owned(), reason)
}

fn status_in(raw: &str, reason: Option<String>) -> DraftStatus {
    match raw {
        "crawling" => DraftStatus::Crawling,
        "drafting" => DraftStatus::Drafting,
        "ready" => DraftStatus::Ready,
        _ => DraftStatus::Failed { reason: reason.unwrap_or_else(|| "drafting failed".into()) },
    }
}

fn to_draft(m: drafts::Model) -> Draft {
    DraftRecord {
        id: DraftId::from_uuid(m.id),
        owner: UserId::from_db(m.user_id),
        url: m.url,
        status: status_in(&m.status, m.failure_reason),
        profile: profile_from_json(&m.profile),
        extras: extras_from_json(&m.extras),
        listing_id: m.listing_id.map(ListingId::from_db),
        version: m.version,
        created_at: m.created_at.with_timezone(&Utc),
        updated_at: m.updated_at.with_timezone(&Utc),
    }
    .into()
}

fn to_invite(m: draft_invites::Model) -> Invite {
    Invite {
        id: m.id,
        draft: DraftId::from_uuid(m.draft_id),
        email: m.email,
        created_at: m.created_at.with_timezone(&Utc),
        accepted_by: m.accepted_by.map(UserId::from_db),
    }
}

fn to_email(m: outbox::Model) -> OutboxEmail {
    OutboxEmail {
        id: m.id,
        to: m.to_address,
        subject: m.subject,
        body: m.body,
        created_at: m.created_at.with_timezone(&Utc),
        sent_at: m.sent_at.map(|t| t.with_timezone(&Utc)),
        attempts: m.attempts,
        last_error: m.last_error,
    }
}

/// Opens a transaction on one draft. On SQLite it is `BEGIN IMMEDIATE`: it takes the write lock at once
/// (waiting its turn), where a deferred transaction that reads first fails with SQLITE_BUSY_SNAPSHOT when
/// another write lands between its read and its write. On PostgreSQL the first write locks the
/// draft's row, so writers of one draft take turns.
async fn begin_on_draft(db: &sea_orm::DatabaseConnection, id: uuid::Uuid) -> RepoResult<sea_orm::DatabaseTransaction> {
    let options = sea_orm::TransactionOptions {
        sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
        ..Default::default()
    };
    let txn = db.begin_with_options(options).await.map_err(repo_err)?;
    drafts::Entity::update_many()
        .col_expr(drafts::Column::Version, Expr::col(drafts::Column::Version))
        .filter(drafts::Column::Id.eq(id))
        .exec(&txn)
        .await
        .map_err(repo_err)?;
    Ok(txn)
}

/// A new draft's row.
fn draft_row(d: &Draft) -> drafts::ActiveModel {
    let (status, reason) = status_out(d.status());
    drafts::ActiveModel {
        id: Set(d.id.as_uuid()),
        user_id: Set(d.owner.get()),
        url: Set(d.url.clone()),
        status: Set(status),
        failure_reason: Set(reason),
        profile: Set(profile_to_json(&d.profile)),
        extras: Set(extras_to_json(&d.extras)),
        listing_id: Set(d.listing_id.map(ListingId::get)),
        created_at: Set(ts(d.created_at)),
        updated_at: Set(ts(d.updated_at)),
        version: Set(d.version),
    }
}

const COFOUNDER: &str = "cofounder";
const OWNER: &str = "owner";

#[async_trait]
impl DraftRepository for SeaOrmStore {
    async fn create_draft(&self, d: &Draft) -> RepoResult<()> {
        draft_row(d).insert(&self.db).await.map_err(repo_err)?;
        Ok(())
    }

    async fn create_draft_within(&self, d: &Draft, max_in_progress: u64) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        // The owner's row, on PostgreSQL: two submissions at once would each count the drafts
        // committed before them and both pass. SQLite's write transactions go one at a time.
        crate::own::lock_account(&txn, d.owner).await?;
        let reading = drafts::Entity::find()
            .filter(drafts::Column::UserId.eq(d.owner.get()))
            .filter(drafts::Column::Status.is_in(["crawling", "drafting"]))
            .count(&txn)
            .await
            .map_err(repo_err)?;
        if reading >= max_in_progress {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        }
        draft_row(d).insert(&txn).await.map_err(repo_err)?;
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn get_draft(&self, id: DraftId) -> RepoResult<Option<Draft>> {
        Ok(drafts::Entity::find_by_id(id.as_uuid()).one(&self.db).await.map_err(repo_err)?.map(to_draft))
    }

    async fn list_drafts(&self, owner: UserId, page: PageRequest) -> RepoResult<Paged<Draft>> {
        let q = drafts::Entity::find().filter(drafts::Column::UserId.eq(owner.get()));
        let (rows, total) =
            crate::store::newest_page(&self.db, q, drafts::Column::CreatedAt, drafts::Column::Id, page).await?;
        Ok(Paged::new(rows.into_iter().map(to_draft).collect(), page, total))
    }

    async fn save_draft(&self, d: &Draft, now: DateTime<Utc>) -> RepoResult<Option<Draft>> {
        let (status, reason) = status_out(d.status());
        let res = drafts::Entity::update_many()
            .col_expr(drafts::Column::Status, Expr::value(status))
            .col_expr(drafts::Column::FailureReason, Expr::value(reason))
            .col_expr(drafts::Column::Url, Expr::value(d.url.clone()))
            .col_expr(drafts::Column::Profile, Expr::value(profile_to_json(&d.profile)))
            .col_expr(drafts::Column::Extras, Expr::value(extras_to_json(&d.extras)))
            .col_expr(drafts::Column::UpdatedAt, Expr::value(ts(now)))
            .col_expr(drafts::Column::Version, Expr::value(d.version + 1))
            .filter(drafts::Column::Id.eq(d.id.as_uuid()))
            .filter(drafts::Column::Version.eq(d.version))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        if res.rows_affected == 0 {
            return Ok(None);
        }
        let mut saved = d.clone();
        saved.version += 1;
        saved.updated_at = now;
        Ok(Some(saved))
    }

    async fn save_draft_listing(&self, d: &Draft, new: &NewListing, now: DateTime<Utc>) -> RepoResult<ListingId> {
        let txn = begin_on_draft(&self.db, d.id.as_uuid()).await?;
        // The listing id a concurrent submit may have recorded since `d` was read.
        let current = drafts::Entity::find_by_id(d.id.as_uuid()).one(&txn).await.map_err(repo_err)?;
        let existing = current.and_then(|m| m.listing_id).or(d.listing_id.map(ListingId::get));
        if let Some(id) = existing {
            let Some(old) = listings::Entity::find_by_id(id).one(&txn).await.map_err(repo_err)? else {
                return Err(RepoError::NotFound);
            };
            let mut am = active_model(new, Some(id), &old.slug, now);
            // Only what the draft decides changes; status, plan, counters and ratings stay.
            for keep in [
                listings::Column::Status,
                listings::Column::Plan,
                listings::Column::LaunchWeek,
                listings::Column::LaunchedAt,
                listings::Column::UnlockedStory,
                listings::Column::UnlockedMilestones,
                listings::Column::UnlockedMedia,
                listings::Column::Featured,
                listings::Column::Verified,
                listings::Column::VotesCount,
                listings::Column::FollowsCount,
                listings::Column::TrendingScore,
                listings::Column::RatingAvg,
                listings::Column::RatingCount,
                listings::Column::DomainRating,
                listings::Column::DomainRatingPrev,
                listings::Column::DomainRatingSource,
                listings::Column::DomainRatingOn,
                listings::Column::RevenueMonthlyCents,
                listings::Column::RevenueSource,
                listings::Column::RevenueAsOf,
                listings::Column::BillboardCents,
                listings::Column::CreatedAt,
            ] {
                am.not_set(keep);
            }
            am.draft_id = Set(Some(d.id.as_uuid()));
            am.update(&txn).await.map_err(repo_err)?;
            listing_categories::Entity::delete_many()
                .filter(listing_categories::Column::ListingId.eq(id))
                .exec(&txn)
                .await
                .map_err(repo_err)?;
            let rows = category_rows(id, new);
            if !rows.is_empty() {
                listing_categories::Entity::insert_many(rows).exec(&txn).await.map_err(repo_err)?;
            }
            txn.commit().await.map_err(repo_err)?;
            return Ok(ListingId::from_db(id));
        }
        txn.rollback().await.map_err(repo_err)?;
        for attempt in 0..50u32 {
            let slug = if attempt == 0 { new.slug.clone() } else { new.slug.with_suffix(attempt + 1) };
            let txn = begin_on_draft(&self.db, d.id.as_uuid()).await?;
            let mut am = active_model(new, None, slug.as_str(), now);
            am.draft_id = Set(Some(d.id.as_uuid()));
            match listings::Entity::insert(am).exec(&txn).await {
                Ok(r) => {
                    let id = r.last_insert_id;
                    let rows = category_rows(id, new);
                    if !rows.is_empty() {
                        listing_categories::Entity::insert_many(rows).exec(&txn).await.map_err(repo_err)?;
                    }
                    let cofounders: Vec<i64> = draft_invites::Entity::find()
                        .filter(draft_invites::Column::DraftId.eq(d.id.as_uuid()))
                        .all(&txn)
                        .await
                        .map_err(repo_err)?
                        .into_iter()
                        .filter_map(|i| i.accepted_by)
                        .filter(|u| *u != d.owner.get())
                        .collect();
                    let members =
                        std::iter::once((d.owner.get(), OWNER)).chain(cofounders.into_iter().map(|u| (u, COFOUNDER)));
                    let mut seen = std::collections::BTreeSet::new();
                    for (user, role) in members {
                        if seen.insert(user) {
                            listing_owners::ActiveModel {
                                listing_id: Set(id),
                                user_id: Set(user),
                                role: Set(role.to_owned()),
                                created_at: Set(ts(now)),
                            }
                            .insert(&txn)
                            .await
                            .map_err(repo_err)?;
                        }
                    }
                    // Recorded only if no other submit got there first; otherwise this one loses.
                    let claimed = drafts::Entity::update_many()
                        .col_expr(drafts::Column::ListingId, Expr::value(id))
                        .filter(drafts::Column::Id.eq(d.id.as_uuid()))
                        .filter(drafts::Column::ListingId.is_null())
                        .exec(&txn)
                        .await
                        .map_err(repo_err)?;
                    if claimed.rows_affected == 0 {
                        txn.rollback().await.map_err(repo_err)?;
                        return Err(RepoError::Conflict("the draft was submitted at the same time".into()));
                    }
                    txn.commit().await.map_err(repo_err)?;
                    return Ok(ListingId::from_db(id));
                }
                Err(e) if is_unique_violation(&e) => txn.rollback().await.map_err(repo_err)?,
                Err(e) => return Err(repo_err(e)),
            }
        }
        Err(RepoError::Conflict(format!("no free slug near {}", new.slug)))
    }

    async fn create_invite(
        &self,
        draft: DraftId,
        email: &str,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> RepoResult<Invite> {
        let txn = begin_on_draft(&self.db, draft.as_uuid()).await?;
        let existing = draft_invites::Entity::find()
            .filter(draft_invites::Column::DraftId.eq(draft.as_uuid()))
            .filter(draft_invites::Column::Email.eq(email))
            .one(&txn)
            .await
            .map_err(repo_err)?;
        if let Some(old) = existing {
            // Invited again: a fresh link replaces the old one; no invite is used up.
            let mut am: draft_invites::ActiveModel = old.into();
            am.token_hash = Set(token_hash.to_owned());
            am.created_at = Set(ts(now));
            let m = am.update(&txn).await.map_err(repo_err)?;
            txn.commit().await.map_err(repo_err)?;
            return Ok(to_invite(m));
        }
        let n = draft_invites::Entity::find()
            .filter(draft_invites::Column::DraftId.eq(draft.as_uuid()))
            .count(&txn)
            .await
            .map_err(repo_err)?;
        if n >= domain::draft::limits::INVITES_PER_LISTING as u64 {
            return Err(RepoError::Conflict("this listing already has 10 invites".into()));
        }
        let m = draft_invites::ActiveModel {
            draft_id: Set(draft.as_uuid()),
            email: Set(email.to_owned()),
            token_hash: Set(token_hash.to_owned()),
            created_at: Set(ts(now)),
            accepted_at: Set(None),
            accepted_by: Set(None),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .map_err(|e| {
            if is_unique_violation(&e) {
                RepoError::Conflict("this address was invited at the same time".into())
            } else {
                repo_err(e)
            }
        })?;
        txn.commit().await.map_err(repo_err)?;
        Ok(to_invite(m))
    }

    async fn invite_by_token(&self, token_hash: &str) -> RepoResult<Option<Invite>> {
        Ok(draft_invites::Entity::find()
            .filter(draft_invites::Column::TokenHash.eq(token_hash))
            .one(&self.db)
            .await
            .map_err(repo_err)?
            .map(to_invite))
    }

    async fn accept_invite(&self, id: i64, user: UserId, now: DateTime<Utc>) -> RepoResult<()> {
        let Some(inv) = draft_invites::Entity::find_by_id(id).one(&self.db).await.map_err(repo_err)? else {
            return Err(RepoError::NotFound);
        };
        let txn = begin_on_draft(&self.db, inv.draft_id).await?;
        if inv.accepted_by.is_none() {
            draft_invites::Entity::update_many()
                .col_expr(draft_invites::Column::AcceptedBy, Expr::value(user.get()))
                .col_expr(draft_invites::Column::AcceptedAt, Expr::value(ts(now)))
                .filter(draft_invites::Column::Id.eq(id))
                .exec(&txn)
                .await
                .map_err(repo_err)?;
        }
        let listing =
            drafts::Entity::find_by_id(inv.draft_id).one(&txn).await.map_err(repo_err)?.and_then(|d| d.listing_id);
        if let Some(listing) = listing {
            crate::store::add_owner(&txn, listing, user.get(), COFOUNDER, now).await?;
        }
        txn.commit().await.map_err(repo_err)
    }
}

#[async_trait]
impl Outbox for SeaOrmStore {
    async fn queue_email(&self, to: &str, subject: &str, body: &str, now: DateTime<Utc>) -> RepoResult<i64> {
        let m = outbox::ActiveModel {
            to_address: Set(to.to_owned()),
            subject: Set(subject.to_owned()),
            body: Set(body.to_owned()),
            created_at: Set(ts(now)),
            sent_at: Set(None),
            attempts: Set(0),
            last_error: Set(None),
            ..Default::default()
        }
        .insert(&self.db)
        .await
        .map_err(repo_err)?;
        Ok(m.id)
    }

    async fn outbox(&self, to: Option<&str>, limit: u64) -> RepoResult<Vec<OutboxEmail>> {
        let mut q = outbox::Entity::find();
        if let Some(to) = to {
            q = q.filter(Expr::expr(Func::lower(Expr::col(outbox::Column::ToAddress))).eq(to.to_lowercase()));
        }
        let rows = q.order_by_desc(outbox::Column::Id).limit(limit).all(&self.db).await.map_err(repo_err)?;
        Ok(rows.into_iter().map(to_email).collect())
    }

    async fn get_email(&self, id: i64) -> RepoResult<Option<OutboxEmail>> {
        Ok(outbox::Entity::find_by_id(id).one(&self.db).await.map_err(repo_err)?.map(to_email))
    }

    async fn mark_email_sent(&self, id: i64, now: DateTime<Utc>) -> RepoResult<()> {
        outbox::Entity::update_many()
            .col_expr(outbox::Column::SentAt, Expr::value(ts(now)))
            .col_expr(outbox::Column::Attempts, Expr::col(outbox::Column::Attempts).add(1))
            .col_expr(outbox::Column::LastError, Expr::value(Option::<String>::None))
            .filter(outbox::Column::Id.eq(id))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }

    async fn unsent_emails(&self) -> RepoResult<(u64, Option<DateTime<Utc>>)> {
        use sea_orm::FromQueryResult;
        #[derive(Debug, FromQueryResult)]
        struct Row {
            n: i64,
            oldest: Option<DateTime<FixedOffset>>,
        }
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox WHERE sent_at IS NULL");
        let row = Row::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.map_or((0, None), |r| (u64::try_from(r.n).unwrap_or(0), r.oldest.map(|t| t.with_timezone(&Utc)))))
    }

    async fn mark_email_failed(&self, id: i64, error: &str) -> RepoResult<()> {
        outbox::Entity::update_many()
            .col_expr(outbox::Column::Attempts, Expr::col(outbox::Column::Attempts).add(1))
            .col_expr(outbox::Column::LastError, Expr::value(error.to_owned()))
            .filter(outbox::Column::Id.eq(id))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }
}
