//! sea-orm entities, one module per table, generated from the migrated PostgreSQL schema.

pub mod prelude;

pub mod alternatives;
pub mod api_keys;
pub mod awards;
pub mod billboard_contributions;
pub mod blog_posts;
pub mod categories;
pub mod claims;
pub mod domain_ratings;
pub mod draft_invites;
pub mod drafts;
pub mod follows;
pub mod founders;
pub mod interview_answers;
pub mod interview_questions;
pub mod jobs;
pub mod listing_categories;
pub mod listing_founders;
pub mod listing_media;
pub mod listing_owners;
pub mod listing_updates;
pub mod listing_versions;
pub mod listing_views;
pub mod listings;
pub mod milestones;
pub mod order_lines;
pub mod orders;
pub mod outbox;
pub mod products;
pub mod reviews;
pub mod site_settings;
pub mod stories;
pub mod users;
pub mod vote_tallies;
pub mod votes;
