//! Launch of the Week awards: #1, #2 and #3 of a week by community votes only.

use crate::ValidationError;
use crate::ids::ListingId;
use crate::week::LaunchWeek;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct AwardRank(u8);

impl AwardRank {
    pub fn parse(raw: i64) -> Result<Self, ValidationError> {
        if (1..=3).contains(&raw) {
            Ok(Self(raw as u8))
        } else {
            Err(ValidationError::new("rank", "must be 1, 2 or 3"))
        }
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Award {
    pub week: LaunchWeek,
    pub rank: AwardRank,
    pub listing_id: ListingId,
    pub votes: i64,
}

/// The week's winners from (listing, community votes in that week) pairs: the three most voted,
/// ties broken by the earlier launch (lower id), listings without votes never win.
pub fn launch_of_the_week(week: LaunchWeek, mut tally: Vec<(ListingId, i64)>) -> Vec<Award> {
    tally.retain(|(_, v)| *v > 0);
    tally.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    tally
        .into_iter()
        .take(3)
        .enumerate()
        .map(|(i, (listing_id, votes))| Award { week, rank: AwardRank(i as u8 + 1), listing_id, votes })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    #[test]
    fn top_three_by_votes_with_stable_ties() {
        let w = LaunchWeek::containing(NaiveDate::from_ymd_opt(2026, 11, 16).unwrap());
        let id = ListingId::from_db;
        let awards = launch_of_the_week(w, vec![(id(4), 3), (id(2), 9), (id(3), 9), (id(1), 0), (id(5), 1)]);
        let got: Vec<(i64, u8)> = awards.iter().map(|a| (a.listing_id.get(), a.rank.get())).collect();
        assert_eq!(got, vec![(2, 1), (3, 2), (4, 3)]);
        assert!(launch_of_the_week(w, vec![(id(1), 0)]).is_empty());
        assert!(AwardRank::parse(4).is_err());
    }
}
