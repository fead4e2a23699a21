//! Reference data repositories: products and prices, site settings, interview questions.

use crate::entity::{interview_questions, products, site_settings};
use crate::store::{SeaOrmStore, repo_err};
use async_trait::async_trait;
use chrono::Utc;
use domain::ids::QuestionId;
use domain::interview::InterviewQuestion;
use domain::money::Cents;
use domain::ports::{InterviewRepository, ProductRepository, RepoError, RepoResult, SettingsRepository};
use domain::product::{Product, ProductCode, ProductKind};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use std::collections::HashSet;

fn to_product(m: products::Model) -> Option<Product> {
    Some(Product {
        code: ProductCode::parse(&m.code).ok()?,
        kind: ProductKind::parse(&m.kind)?,
        name: m.name,
        description: m.description,
        price: Cents::new(m.price_cents),
        needs_listing: m.needs_listing,
        active: m.active,
        position: m.position,
    })
}

#[async_trait]
impl ProductRepository for SeaOrmStore {
    async fn ensure_products(&self, defaults: &[Product]) -> RepoResult<usize> {
        let txn = self.begin_write().await?;
        let have: HashSet<String> =
            products::Entity::find().all(&txn).await.map_err(repo_err)?.into_iter().map(|p| p.code).collect();
        let mut n = 0;
        for p in defaults.iter().filter(|p| !have.contains(p.code.as_str())) {
            products::Entity::insert(products::ActiveModel {
                code: Set(p.code.as_str().to_owned()),
                kind: Set(p.kind.as_str().to_owned()),
                name: Set(p.name.clone()),
                description: Set(p.description.clone()),
                price_cents: Set(p.price.get()),
                needs_listing: Set(p.needs_listing),
                active: Set(p.active),
                position: Set(p.position),
                updated_at: Set(Utc::now().into()),
            })
            .exec(&txn)
            .await
            .map_err(repo_err)?;
            n += 1;
        }
        txn.commit().await.map_err(repo_err)?;
        Ok(n)
    }

    async fn list_products(&self) -> RepoResult<Vec<Product>> {
        Ok(products::Entity::find()
            .filter(products::Column::Active.eq(true))
            .order_by_asc(products::Column::Position)
            .order_by_asc(products::Column::Code)
            .all(&self.db)
            .await
            .map_err(repo_err)?
            .into_iter()
            .filter_map(to_product)
            .collect())
    }

    async fn set_price(&self, code: &ProductCode, price: Cents) -> RepoResult<()> {
        let r = products::Entity::update_many()
            .col_expr(products::Column::PriceCents, price.get().into())
            .col_expr(
                products::Column::UpdatedAt,
                sea_orm::sea_query::Expr::value(chrono::DateTime::<chrono::FixedOffset>::from(Utc::now())),
            )
            .filter(products::Column::Code.eq(code.as_str()))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        if r.rows_affected == 0 { Err(RepoError::NotFound) } else { Ok(()) }
    }
}

#[async_trait]
impl SettingsRepository for SeaOrmStore {
    async fn ensure_settings(&self, defaults: &[(&str, &str)]) -> RepoResult<usize> {
        let have: HashSet<String> =
            site_settings::Entity::find().all(&self.db).await.map_err(repo_err)?.into_iter().map(|s| s.key).collect();
        let mut n = 0;
        for (k, v) in defaults.iter().filter(|(k, _)| !have.contains(*k)) {
            let r = site_settings::Entity::insert(site_settings::ActiveModel {
                key: Set((*k).to_owned()),
                value: Set((*v).to_owned()),
                updated_at: Set(Utc::now().into()),
            })
            .on_conflict(OnConflict::column(site_settings::Column::Key).do_nothing().to_owned())
            .exec_without_returning(&self.db)
            .await
            .map_err(repo_err)?;
            n += r as usize;
        }
        Ok(n)
    }

    async fn all_settings(&self) -> RepoResult<Vec<(String, String)>> {
        Ok(site_settings::Entity::find()
            .order_by_asc(site_settings::Column::Key)
            .all(&self.db)
            .await
            .map_err(repo_err)?
            .into_iter()
            .map(|s| (s.key, s.value))
            .collect())
    }

    async fn set_setting(&self, key: &str, value: &str) -> RepoResult<()> {
        site_settings::Entity::insert(site_settings::ActiveModel {
            key: Set(key.to_owned()),
            value: Set(value.to_owned()),
            updated_at: Set(Utc::now().into()),
        })
        .on_conflict(
            OnConflict::column(site_settings::Column::Key)
                .update_columns([site_settings::Column::Value, site_settings::Column::UpdatedAt])
                .to_owned(),
        )
        .exec_without_returning(&self.db)
        .await
        .map_err(repo_err)?;
        Ok(())
    }
}

#[async_trait]
impl InterviewRepository for SeaOrmStore {
    async fn ensure_questions(&self, questions: &[&str]) -> RepoResult<usize> {
        let txn = self.begin_write().await?;
        let existing = interview_questions::Entity::find().all(&txn).await.map_err(repo_err)?;
        let mut next = existing.iter().map(|q| q.position).max().unwrap_or(0);
        let have: HashSet<String> = existing.into_iter().map(|q| q.text).collect();
        let mut n = 0;
        for q in questions.iter().filter(|q| !have.contains(**q)) {
            next += 1;
            interview_questions::Entity::insert(interview_questions::ActiveModel {
                position: Set(next),
                text: Set((*q).to_owned()),
                active: Set(true),
                ..Default::default()
            })
            .exec(&txn)
            .await
            .map_err(repo_err)?;
            n += 1;
        }
        txn.commit().await.map_err(repo_err)?;
        Ok(n)
    }

    async fn list_questions(&self) -> RepoResult<Vec<InterviewQuestion>> {
        Ok(interview_questions::Entity::find()
            .filter(interview_questions::Column::Active.eq(true))
            .order_by_asc(interview_questions::Column::Position)
            .all(&self.db)
            .await
            .map_err(repo_err)?
            .into_iter()
            .map(|q| InterviewQuestion { id: QuestionId::from_db(q.id), position: q.position, text: q.text })
            .collect())
    }
}
