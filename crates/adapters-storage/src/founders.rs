//! Founders as stored: the row-to-domain conversion shared by the listing profile and founder reads.

use crate::entity::founders;
use crate::json::socials_from_json;
use domain::founder::Founder;
use domain::ids::{FounderId, UserId};
use domain::slug::Slug;

pub(crate) fn to_founder(m: founders::Model) -> Founder {
    Founder {
        id: FounderId::from_db(m.id),
        slug: Slug::from_db(m.slug),
        name: m.name,
        headline: m.headline,
        bio: m.bio,
        country: m.country,
        avatar_url: m.avatar_url,
        socials: socials_from_json(&m.socials),
        user_id: m.user_id.map(UserId::from_db),
    }
}
