//! The category repository: the two-level tree, seeded from reference data, with live counts.

use crate::entity::categories;
use crate::json::{faqs_from_json, faqs_to_json, list_from_json, list_to_json};
use crate::store::{CATEGORY_TTL, SeaOrmStore, repo_err};
use async_trait::async_trait;
use domain::category::{Category, NewCategory};
use domain::ids::CategoryId;
use domain::ports::{CategoryRepository, RepoError, RepoResult};
use domain::slug::Slug;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

fn to_category(m: categories::Model) -> Category {
    Category {
        id: CategoryId::from_db(m.id),
        slug: Slug::from_db(m.slug),
        name: m.name,
        description: m.description,
        parent_id: m.parent_id.map(CategoryId::from_db),
        position: m.position,
        faqs: faqs_from_json(&m.faqs),
        attributes: list_from_json(&m.attributes),
        synonyms: list_from_json(&m.synonyms),
    }
}

#[async_trait]
impl CategoryRepository for SeaOrmStore {
    async fn ensure_categories(&self, cats: &[NewCategory]) -> RepoResult<usize> {
        let txn = self.begin_write().await?;
        let existing = categories::Entity::find().all(&txn).await.map_err(repo_err)?;
        // Synonyms are reference data an admin does not edit: a category stored before it had any
        // (migration 18) gets the reference's.
        for m in &existing {
            if let Some(c) = cats.iter().find(|c| c.slug.as_str() == m.slug)
                && !c.synonyms.is_empty()
                && list_from_json(&m.synonyms).is_empty()
            {
                categories::Entity::update(categories::ActiveModel {
                    id: Set(m.id),
                    synonyms: Set(list_to_json(&c.synonyms)),
                    ..Default::default()
                })
                .exec(&txn)
                .await
                .map_err(repo_err)?;
            }
        }
        let mut ids: HashMap<String, i64> = existing.into_iter().map(|c| (c.slug, c.id)).collect();
        let mut inserted = 0;
        // Parents first, so a child can find its parent's id.
        let (parents, children): (Vec<&NewCategory>, Vec<&NewCategory>) = cats.iter().partition(|c| c.parent.is_none());
        for c in parents.into_iter().chain(children) {
            if ids.contains_key(c.slug.as_str()) {
                continue;
            }
            let parent_id = match &c.parent {
                Some(p) => Some(
                    *ids.get(p.as_str())
                        .ok_or_else(|| RepoError::Conflict(format!("category {} names unknown parent {p}", c.slug)))?,
                ),
                None => None,
            };
            let r = categories::Entity::insert(categories::ActiveModel {
                slug: Set(c.slug.as_str().to_owned()),
                name: Set(c.name.clone()),
                description: Set(c.description.clone()),
                parent_id: Set(parent_id),
                position: Set(c.position),
                faqs: Set(faqs_to_json(&c.faqs)),
                attributes: Set(list_to_json(&c.attributes)),
                synonyms: Set(list_to_json(&c.synonyms)),
                ..Default::default()
            })
            .exec(&txn)
            .await
            .map_err(repo_err)?;
            ids.insert(c.slug.as_str().to_owned(), r.last_insert_id);
            inserted += 1;
        }
        txn.commit().await.map_err(repo_err)?;
        self.forget_categories();
        Ok(inserted)
    }

    async fn live_listing_counts(&self) -> RepoResult<domain::category::CategoryCounts> {
        #[derive(Debug, sea_orm::FromQueryResult)]
        struct Count {
            id: i64,
            live_listings: i64,
        }
        impl crate::inline::FromSqliteRow for Count {
            fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
                crate::inline::from_sqlite_row!(row, at, Self { id, live_listings })
            }
        }
        impl crate::pipe::FromPgRow for Count {
            fn from_pg(row: &tokio_postgres::Row, at: &mut usize) -> Result<Self, String> {
                crate::pipe::from_pg_row!(row, at, Self { id, live_listings })
            }
        }
        // Kept on the rows by triggers (migration 19), read fresh: two integers a row, no aggregation.
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("SELECT id, live_listings FROM categories");
        Ok(self
            .short_read::<Count>(q.build())
            .await?
            .into_iter()
            .map(|c| (CategoryId::from_db(c.id), c.live_listings.max(0) as u64))
            .collect())
    }

    async fn all_categories(&self) -> RepoResult<Arc<Vec<Category>>> {
        if let Some((at, cats)) = self.categories.read().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref()
            && at.elapsed() < CATEGORY_TTL
        {
            return Ok(cats.clone());
        }
        let cats: Vec<Category> = categories::Entity::find()
            .order_by_asc(categories::Column::Position)
            .order_by_asc(categories::Column::Id)
            .all(&self.db)
            .await
            .map_err(repo_err)?
            .into_iter()
            .map(to_category)
            .collect();
        let cats = Arc::new(cats);
        *self.categories.write().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((Instant::now(), cats.clone()));
        Ok(cats)
    }

    async fn get_category_by_slug(&self, slug: &Slug) -> RepoResult<Option<Category>> {
        Ok(categories::Entity::find()
            .filter(categories::Column::Slug.eq(slug.as_str()))
            .one(&self.db)
            .await
            .map_err(repo_err)?
            .map(to_category))
    }
}
