//! sea-orm entity for the migrated schema (see docs/INTERNALS.md to regenerate).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "listing_view_marks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub listing_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub day: Date,
    #[sea_orm(primary_key, auto_increment = false)]
    pub viewer_key: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
