//! sea-orm entity for `payment_events` (migration 12): one row per payment gateway event seen.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "payment_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub gateway: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub event_id: String,
    pub received_at: DateTimeWithTimeZone,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
