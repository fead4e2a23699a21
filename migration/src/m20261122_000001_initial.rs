//! The initial schema: every table of the domain model, with the indexes the public reads use.
//! JSON values (lists, socials, FAQs, draft documents) are stored as text holding JSON, the same on
//! both databases; ids are 64-bit; instants are timestamps with time zone.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

fn id() -> ColumnDef {
    big_pk_auto("id")
}

/// A NOT NULL text column that starts empty.
fn txt(name: &'static str) -> ColumnDef {
    text(name).default("").take()
}

/// A NOT NULL text column holding a JSON array, starting empty.
fn json_list(name: &'static str) -> ColumnDef {
    text(name).default("[]").take()
}

fn json_obj(name: &'static str) -> ColumnDef {
    text(name).default("{}").take()
}

fn ts(name: &'static str) -> ColumnDef {
    timestamp_with_time_zone(name)
}

fn ts_null(name: &'static str) -> ColumnDef {
    timestamp_with_time_zone_null(name)
}

fn flag(name: &'static str) -> ColumnDef {
    boolean(name).default(false).take()
}

fn counter(name: &'static str) -> ColumnDef {
    big_integer(name).default(0).take()
}

/// A foreign key named `fk_{from}_{col}` to `to.id` (used by later migrations too).
pub(crate) fn fk(
    from: &'static str,
    col: &'static str,
    to: &'static str,
    on_delete: ForeignKeyAction,
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .name(format!("fk_{from}_{col}"))
        .from(Alias::new(from), Alias::new(col))
        .to(Alias::new(to), Alias::new("id"))
        .on_delete(on_delete)
        .take()
}

/// An index named `ix_{table}_{name}` (used by later migrations too).
pub(crate) fn index(table: &'static str, name: &str, cols: &[&'static str]) -> IndexCreateStatement {
    let mut i = Index::create();
    i.name(format!("ix_{table}_{name}")).table(Alias::new(table)).if_not_exists();
    for c in cols {
        i.col(Alias::new(*c));
    }
    i.take()
}

fn unique(table: &'static str, name: &str, cols: &[&'static str]) -> IndexCreateStatement {
    let mut i = index(table, name, cols);
    i.unique();
    i
}

fn table(name: &'static str) -> TableCreateStatement {
    Table::create().table(Alias::new(name)).if_not_exists().take()
}

const CASCADE: ForeignKeyAction = ForeignKeyAction::Cascade;
const SET_NULL: ForeignKeyAction = ForeignKeyAction::SetNull;
const RESTRICT: ForeignKeyAction = ForeignKeyAction::Restrict;

/// Tables in creation order (a table comes after those it refers to); dropped in reverse.
fn tables() -> Vec<(TableCreateStatement, Vec<IndexCreateStatement>)> {
    vec![
        (
            table("users")
                .col(id())
                .col(string_uniq("email"))
                .col(string_null("password_hash"))
                .col(txt("display_name"))
                .col(flag("is_admin"))
                .col(flag("is_demo"))
                .col(ts("created_at"))
                .take(),
            vec![],
        ),
        (
            table("api_keys")
                .col(id())
                .col(big_integer("user_id"))
                .col(string("name"))
                .col(string_uniq("prefix"))
                .col(string_uniq("key_hash"))
                .col(string("scopes"))
                .col(ts("created_at"))
                .col(ts_null("last_used_at"))
                .col(ts_null("revoked_at"))
                .foreign_key(&mut fk("api_keys", "user_id", "users", CASCADE))
                .take(),
            vec![index("api_keys", "user", &["user_id"])],
        ),
        (
            table("categories")
                .col(id())
                .col(string_uniq("slug"))
                .col(string("name"))
                .col(txt("description"))
                .col(big_integer_null("parent_id"))
                .col(integer("position").default(0))
                .col(json_list("faqs"))
                .col(json_list("attributes"))
                .foreign_key(&mut fk("categories", "parent_id", "categories", RESTRICT))
                .take(),
            vec![index("categories", "parent", &["parent_id", "position"])],
        ),
        (
            table("listings")
                .col(id())
                .col(string_uniq("slug"))
                .col(string("name"))
                .col(txt("url"))
                .col(txt("domain"))
                .col(txt("tagline"))
                .col(txt("short_description"))
                .col(txt("description"))
                .col(string_null("stage"))
                .col(txt("pricing_model"))
                .col(txt("pricing_summary"))
                .col(string_null("country"))
                .col(txt("city"))
                .col(integer_null("founded_year"))
                .col(txt("contact_email"))
                .col(txt("demo_video_url"))
                .col(txt("logo_url"))
                .col(json_list("features"))
                .col(json_list("usps"))
                .col(json_list("keywords"))
                .col(json_list("tags"))
                .col(json_list("faqs"))
                .col(json_obj("socials"))
                .col(txt("headline"))
                .col(txt("summary"))
                .col(txt("seo_title"))
                .col(txt("seo_description"))
                .col(json_list("not_found_on_website"))
                .col(string("status"))
                .col(string("plan"))
                .col(date_null("launch_week"))
                .col(ts_null("launched_at"))
                .col(big_integer_null("primary_category_id"))
                .col(flag("unlocked_story"))
                .col(flag("unlocked_milestones"))
                .col(flag("unlocked_media"))
                .col(flag("featured"))
                .col(flag("verified"))
                .col(counter("votes_count"))
                .col(counter("follows_count"))
                .col(counter("views_count"))
                .col(double("trending_score").default(0.0))
                .col(double_null("rating_avg"))
                .col(integer("rating_count").default(0))
                .col(small_integer_null("domain_rating"))
                .col(small_integer_null("domain_rating_prev"))
                .col(txt("domain_rating_source"))
                .col(date_null("domain_rating_on"))
                .col(big_integer_null("revenue_monthly_cents"))
                .col(txt("revenue_source"))
                .col(date_null("revenue_as_of"))
                .col(counter("billboard_cents"))
                .col(uuid_null("draft_id"))
                .col(ts("created_at"))
                .col(ts("updated_at"))
                .foreign_key(&mut fk("listings", "primary_category_id", "categories", SET_NULL))
                .take(),
            vec![
                index("listings", "status_votes", &["status", "votes_count"]),
                index("listings", "status_trending", &["status", "trending_score"]),
                index("listings", "status_launched", &["status", "launched_at"]),
                index("listings", "status_created", &["status", "created_at"]),
                index("listings", "status_views", &["status", "views_count"]),
                index("listings", "status_follows", &["status", "follows_count"]),
                index("listings", "week_status", &["launch_week", "status"]),
                index("listings", "category_status_votes", &["primary_category_id", "status", "votes_count"]),
                index("listings", "domain", &["domain"]),
                index("listings", "country", &["country"]),
                index("listings", "domain_rating", &["domain_rating"]),
                index("listings", "revenue", &["revenue_monthly_cents"]),
                index("listings", "billboard", &["billboard_cents"]),
            ],
        ),
        (
            table("listing_categories")
                .col(big_integer("listing_id"))
                .col(big_integer("category_id"))
                .col(flag("is_primary"))
                .primary_key(Index::create().col(Alias::new("listing_id")).col(Alias::new("category_id")))
                .foreign_key(&mut fk("listing_categories", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("listing_categories", "category_id", "categories", CASCADE))
                .take(),
            vec![index("listing_categories", "category", &["category_id", "listing_id"])],
        ),
        (
            table("listing_owners")
                .col(big_integer("listing_id"))
                .col(big_integer("user_id"))
                .col(string("role"))
                .col(ts("created_at"))
                .primary_key(Index::create().col(Alias::new("listing_id")).col(Alias::new("user_id")))
                .foreign_key(&mut fk("listing_owners", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("listing_owners", "user_id", "users", CASCADE))
                .take(),
            vec![index("listing_owners", "user", &["user_id"])],
        ),
        (
            table("listing_versions")
                .col(id())
                .col(big_integer("listing_id"))
                .col(big_integer_null("user_id"))
                .col(text("before"))
                .col(text("after"))
                .col(ts("created_at"))
                .foreign_key(&mut fk("listing_versions", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("listing_versions", "user_id", "users", SET_NULL))
                .take(),
            vec![index("listing_versions", "listing", &["listing_id", "created_at"])],
        ),
        (
            table("listing_updates")
                .col(id())
                .col(big_integer("listing_id"))
                .col(string("title"))
                .col(text("body"))
                .col(ts("posted_at"))
                .foreign_key(&mut fk("listing_updates", "listing_id", "listings", CASCADE))
                .take(),
            vec![
                index("listing_updates", "listing", &["listing_id", "posted_at"]),
                index("listing_updates", "posted", &["posted_at"]),
            ],
        ),
        (
            table("milestones")
                .col(id())
                .col(big_integer("listing_id"))
                .col(date("date"))
                .col(string("title"))
                .col(txt("description"))
                .col(txt("url"))
                .foreign_key(&mut fk("milestones", "listing_id", "listings", CASCADE))
                .take(),
            vec![index("milestones", "listing", &["listing_id", "date"])],
        ),
        (
            table("stories")
                .col(big_integer("listing_id").primary_key())
                .col(json_list("sections"))
                .col(ts("updated_at"))
                .foreign_key(&mut fk("stories", "listing_id", "listings", CASCADE))
                .take(),
            vec![],
        ),
        (
            table("listing_media")
                .col(id())
                .col(big_integer("listing_id"))
                .col(string("kind"))
                .col(text("url"))
                .col(txt("caption"))
                .col(integer("position").default(0))
                .foreign_key(&mut fk("listing_media", "listing_id", "listings", CASCADE))
                .take(),
            vec![index("listing_media", "listing", &["listing_id", "position"])],
        ),
        (
            table("reviews")
                .col(id())
                .col(big_integer("listing_id"))
                .col(big_integer_null("user_id"))
                .col(small_integer("rating"))
                .col(txt("body"))
                .col(flag("genuine"))
                .col(ts("created_at"))
                .foreign_key(&mut fk("reviews", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("reviews", "user_id", "users", SET_NULL))
                .take(),
            vec![index("reviews", "listing", &["listing_id"])],
        ),
        (
            table("alternatives")
                .col(big_integer("listing_id"))
                .col(big_integer("alternative_id"))
                .col(flag("approved"))
                .primary_key(Index::create().col(Alias::new("listing_id")).col(Alias::new("alternative_id")))
                .foreign_key(&mut fk("alternatives", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("alternatives", "alternative_id", "listings", CASCADE))
                .take(),
            vec![],
        ),
        (
            table("votes")
                .col(id())
                .col(big_integer("listing_id"))
                .col(big_integer("user_id"))
                .col(ts("created_at"))
                .foreign_key(&mut fk("votes", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("votes", "user_id", "users", CASCADE))
                .take(),
            vec![
                unique("votes", "listing_user", &["listing_id", "user_id"]),
                index("votes", "created", &["created_at", "listing_id"]),
            ],
        ),
        (
            table("follows")
                .col(big_integer("listing_id"))
                .col(big_integer("user_id"))
                .col(ts("created_at"))
                .primary_key(Index::create().col(Alias::new("listing_id")).col(Alias::new("user_id")))
                .foreign_key(&mut fk("follows", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("follows", "user_id", "users", CASCADE))
                .take(),
            vec![index("follows", "user", &["user_id"])],
        ),
        (
            table("listing_views")
                .col(big_integer("listing_id"))
                .col(date("day"))
                .col(counter("views"))
                .primary_key(Index::create().col(Alias::new("listing_id")).col(Alias::new("day")))
                .foreign_key(&mut fk("listing_views", "listing_id", "listings", CASCADE))
                .take(),
            vec![],
        ),
        (
            table("domain_ratings")
                .col(id())
                .col(big_integer("listing_id"))
                .col(small_integer("rating"))
                .col(string("source"))
                .col(date("measured_on"))
                .foreign_key(&mut fk("domain_ratings", "listing_id", "listings", CASCADE))
                .take(),
            vec![index("domain_ratings", "listing", &["listing_id", "measured_on"])],
        ),
        (
            table("founders")
                .col(id())
                .col(string_uniq("slug"))
                .col(string("name"))
                .col(txt("headline"))
                .col(txt("bio"))
                .col(string_null("country"))
                .col(txt("avatar_url"))
                .col(json_obj("socials"))
                .col(big_integer_null("user_id"))
                .col(ts("created_at"))
                .foreign_key(&mut fk("founders", "user_id", "users", SET_NULL))
                .take(),
            vec![index("founders", "country", &["country"]), index("founders", "user", &["user_id"])],
        ),
        (
            table("listing_founders")
                .col(big_integer("listing_id"))
                .col(big_integer("founder_id"))
                .col(txt("title"))
                .col(integer("position").default(0))
                .primary_key(Index::create().col(Alias::new("listing_id")).col(Alias::new("founder_id")))
                .foreign_key(&mut fk("listing_founders", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("listing_founders", "founder_id", "founders", CASCADE))
                .take(),
            vec![index("listing_founders", "founder", &["founder_id"])],
        ),
        (
            table("interview_questions")
                .col(id())
                .col(integer("position"))
                .col(string_uniq("text"))
                .col(boolean("active").default(true))
                .take(),
            vec![],
        ),
        (
            table("interview_answers")
                .col(big_integer("user_id"))
                .col(big_integer("question_id"))
                .col(text("answer"))
                .col(ts("updated_at"))
                .primary_key(Index::create().col(Alias::new("user_id")).col(Alias::new("question_id")))
                .foreign_key(&mut fk("interview_answers", "user_id", "users", CASCADE))
                .foreign_key(&mut fk("interview_answers", "question_id", "interview_questions", CASCADE))
                .take(),
            vec![],
        ),
        (
            table("blog_posts")
                .col(id())
                .col(string_uniq("slug"))
                .col(string("title"))
                .col(txt("summary"))
                .col(text("body_markdown"))
                .col(txt("author"))
                .col(json_list("tags"))
                .col(json_list("faqs"))
                .col(ts_null("published_at"))
                .take(),
            vec![index("blog_posts", "published", &["published_at"])],
        ),
        (
            table("awards")
                .col(id())
                .col(date("week_start"))
                .col(small_integer("rank"))
                .col(big_integer("listing_id"))
                .col(counter("votes"))
                .foreign_key(&mut fk("awards", "listing_id", "listings", CASCADE))
                .take(),
            vec![unique("awards", "week_rank", &["week_start", "rank"]), index("awards", "listing", &["listing_id"])],
        ),
        (
            table("products")
                .col(string("code").primary_key())
                .col(string("kind"))
                .col(string("name"))
                .col(txt("description"))
                .col(big_integer("price_cents"))
                .col(flag("needs_listing"))
                .col(boolean("active").default(true))
                .col(integer("position").default(0))
                .col(ts("updated_at"))
                .take(),
            vec![],
        ),
        (
            table("orders")
                .col(id())
                .col(string_uniq("number"))
                .col(big_integer("user_id"))
                .col(string("status"))
                .col(string_null("billing_country"))
                .col(string_null("vat_number"))
                .col(flag("reverse_charge"))
                .col(integer("vat_rate_bp").default(0))
                .col(counter("net_cents"))
                .col(counter("vat_cents"))
                .col(counter("gross_cents"))
                .col(txt("vat_note"))
                .col(string("gateway"))
                .col(string_null("gateway_ref"))
                .col(ts("created_at"))
                .col(ts_null("paid_at"))
                .foreign_key(&mut fk("orders", "user_id", "users", RESTRICT))
                .take(),
            vec![
                index("orders", "user_created", &["user_id", "created_at"]),
                index("orders", "gateway_ref", &["gateway_ref"]),
            ],
        ),
        (
            table("order_lines")
                .col(id())
                .col(big_integer("order_id"))
                .col(string("product_code"))
                .col(big_integer_null("listing_id"))
                .col(json_obj("options"))
                .col(counter("net_cents"))
                .col(counter("vat_cents"))
                .col(counter("gross_cents"))
                .col(ts_null("fulfilled_at"))
                .col(txt("fulfilment_note"))
                .foreign_key(&mut fk("order_lines", "order_id", "orders", CASCADE))
                .foreign_key(&mut fk("order_lines", "listing_id", "listings", SET_NULL))
                .take(),
            vec![index("order_lines", "order", &["order_id"])],
        ),
        (
            table("billboard_contributions")
                .col(id())
                .col(big_integer("listing_id"))
                .col(big_integer_null("order_line_id"))
                .col(big_integer("amount_cents"))
                .col(ts("created_at"))
                .foreign_key(&mut fk("billboard_contributions", "listing_id", "listings", CASCADE))
                .foreign_key(&mut fk("billboard_contributions", "order_line_id", "order_lines", SET_NULL))
                .take(),
            vec![index("billboard_contributions", "listing", &["listing_id"])],
        ),
        (
            table("claims")
                .col(id())
                .col(big_integer("user_id"))
                .col(big_integer("listing_id"))
                .col(string("method"))
                .col(string_null("email"))
                .col(string("token_hash"))
                .col(string("status"))
                .col(ts("created_at"))
                .col(ts("expires_at"))
                .col(ts_null("verified_at"))
                .col(text_null("last_check"))
                .foreign_key(&mut fk("claims", "user_id", "users", CASCADE))
                .foreign_key(&mut fk("claims", "listing_id", "listings", CASCADE))
                .take(),
            vec![index("claims", "user", &["user_id", "created_at"]), index("claims", "listing", &["listing_id"])],
        ),
        (
            table("drafts")
                .col(uuid("id").primary_key())
                .col(big_integer("user_id"))
                .col(text("url"))
                .col(string("status"))
                .col(text_null("failure_reason"))
                .col(json_obj("profile"))
                .col(json_obj("extras"))
                .col(big_integer_null("listing_id"))
                .col(ts("created_at"))
                .col(ts("updated_at"))
                .foreign_key(&mut fk("drafts", "user_id", "users", CASCADE))
                .foreign_key(&mut fk("drafts", "listing_id", "listings", SET_NULL))
                .take(),
            vec![index("drafts", "user_created", &["user_id", "created_at"])],
        ),
        (
            table("draft_invites")
                .col(id())
                .col(uuid("draft_id"))
                .col(string("email"))
                .col(string_uniq("token_hash"))
                .col(ts("created_at"))
                .col(ts_null("accepted_at"))
                .col(big_integer_null("accepted_by"))
                .foreign_key(
                    ForeignKey::create()
                        .name("fk_draft_invites_draft_id")
                        .from(Alias::new("draft_invites"), Alias::new("draft_id"))
                        .to(Alias::new("drafts"), Alias::new("id"))
                        .on_delete(CASCADE),
                )
                .foreign_key(&mut fk("draft_invites", "accepted_by", "users", SET_NULL))
                .take(),
            vec![index("draft_invites", "draft", &["draft_id"])],
        ),
        (
            table("site_settings").col(string("key").primary_key()).col(text("value")).col(ts("updated_at")).take(),
            vec![],
        ),
        (
            table("jobs")
                .col(id())
                .col(string("kind"))
                .col(json_obj("payload"))
                .col(ts("run_at"))
                .col(string("status"))
                .col(integer("attempts").default(0))
                .col(string_null("locked_by"))
                .col(ts_null("locked_until"))
                .col(text_null("last_error"))
                .col(ts("created_at"))
                .col(ts_null("finished_at"))
                .take(),
            vec![index("jobs", "due", &["status", "run_at"])],
        ),
        (
            table("outbox")
                .col(id())
                .col(string("to_address"))
                .col(string("subject"))
                .col(text("body"))
                .col(ts("created_at"))
                .col(ts_null("sent_at"))
                .col(integer("attempts").default(0))
                .col(text_null("last_error"))
                .take(),
            vec![index("outbox", "unsent", &["sent_at", "created_at"])],
        ),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (t, indexes) in tables() {
            manager.create_table(t).await?;
            for i in indexes {
                manager.create_index(i).await?;
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (t, _) in tables().into_iter().rev() {
            if let Some(name) = t.get_table_name() {
                manager.drop_table(Table::drop().table(name.clone()).if_exists().take()).await?;
            }
        }
        Ok(())
    }
}
