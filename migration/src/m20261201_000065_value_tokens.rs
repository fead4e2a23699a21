//! SQLite: the full-text index also holds each listing's stage, pricing model (lowercased) and
//! country, one token each in a column of their own (`value_tokens`), so words searched with such a
//! value are one match in the index — the words' doclists merged with the value's — where each match
//! was read from `listings` and checked. At 100k demo listings (Python's sqlite3, best of 5): the
//! capped count of `workflow` with `stage=growing` (5 617) 42 → 2.4 ms, `a*` (10 001, the cap) 78 →
//! 4.3 ms, `team p*` 78 → 11 ms, with `country=US` 43 → 1.4 ms; a rare word 0.4 ms both ways.
//!
//! The tokens are a virtual generated column of `listings`: nothing writes them, and the index's
//! update trigger, which now runs when the stage, pricing model or country is written (an UPDATE never
//! names a generated column), deletes exactly what it indexed. A token is a mark for its field
//! ([`VALUE_MARKS`]) and the value's UTF-8 bytes in hexadecimal, with `A`–`F` written as private-use
//! characters from U+E00A: FTS5's tokenizer keeps private-use characters and digits inside a token
//! (as for the category tokens, migration 61), and with no ASCII letter in it the Porter stemmer
//! leaves it whole, so a value is never split, stemmed or case-folded into another's token. A
//! person's words never hold such a character, and the values are matched in their column only.
//! [`value_token`] writes the same token for a search.
//!
//! The pricing model is lowercased by SQLite's `lower` (ASCII letters only), as the filter always
//! compared it (`lower(pricing_model) = ?`). PostgreSQL holds the same values on its search rows
//! (migration 64); nothing changes there.
//!
//! What it costs: the index is rebuilt (9.8 s at 100k in Python's sqlite3), and each listing has up to
//! three more tokens in it.

use crate::m20261122_000002_search::{SQLITE_FTS_DOWN, sqlite_fts_watching, sqlite_fts_with};
use crate::m20261201_000061_category_tokens::{NOT_DEFERRED, index_imported_of, indexed as with_categories};
use crate::m20261201_000062_prefix_index::PREFIXES;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The marks that begin a stage's, a pricing model's and a country's token (U+E001–U+E003).
pub const VALUE_MARKS: [char; 3] = ['\u{E001}', '\u{E002}', '\u{E003}'];

/// The character that stands for the hexadecimal digit `A` in a token (`B`–`F` follow it).
const HEX_A: u32 = 0xE00A;

/// The listing columns the tokens are made of, in [`VALUE_MARKS`]' order (the pricing model lowercased).
const VALUES: [(&str, &str); 3] =
    [("stage", "stage"), ("pricing_model", "lower(pricing_model)"), ("country", "country")];

/// The token of `value` for the field that `mark` (one of [`VALUE_MARKS`]) begins: what
/// [`tokens_sql`] writes for a listing with that value.
pub fn value_token(mark: char, value: &str) -> String {
    let mut token = String::from(mark);
    for b in value.bytes() {
        for digit in [b >> 4, b & 0xF] {
            token.push(match digit {
                0..=9 => char::from(b'0' + digit),
                _ => char::from_u32(HEX_A + u32::from(digit) - 10).unwrap_or(mark),
            });
        }
    }
    token
}

/// The SQL of a listing's tokens: each value it has (not empty), as [`value_token`] writes it,
/// separated by spaces.
fn tokens_sql() -> String {
    let token = |mark: char, value: &str| {
        let mut hex = format!("hex({value})");
        for (i, letter) in ('A'..='F').enumerate() {
            hex = format!("replace({hex}, '{letter}', char({}))", HEX_A + i as u32);
        }
        format!("CASE WHEN {value} IS NULL OR {value} = '' THEN '' ELSE char({}) || {hex} || ' ' END", mark as u32)
    };
    let parts: Vec<String> = VALUE_MARKS.iter().zip(VALUES).map(|(m, (_, v))| token(*m, v)).collect();
    format!("rtrim({})", parts.join(" || "))
}

/// The columns of the full-text index, in its order.
pub(crate) fn indexed() -> String {
    format!("{}, value_tokens", with_categories())
}

/// The columns whose writing runs the index's update trigger: the indexed ones, with the values
/// for their generated column.
fn watched() -> String {
    let values: Vec<&str> = VALUES.iter().map(|(c, _)| *c).collect();
    format!("{}, {}", with_categories(), values.join(", "))
}

/// What an import that deferred the index runs at its end (see migration 61's `index_imported_of`).
pub fn index_imported() -> [String; 2] {
    index_imported_of(&indexed())
}

fn up() -> Vec<String> {
    let mut s = vec![format!(
        "ALTER TABLE listings ADD COLUMN value_tokens TEXT GENERATED ALWAYS AS ({}) VIRTUAL",
        tokens_sql()
    )];
    s.extend(SQLITE_FTS_DOWN.iter().map(|d| (*d).to_owned()));
    s.extend(sqlite_fts_watching(&indexed(), &watched(), NOT_DEFERRED, &format!(", {PREFIXES}")));
    s
}

fn down() -> Vec<String> {
    let mut s: Vec<String> = SQLITE_FTS_DOWN.iter().map(|d| (*d).to_owned()).collect();
    s.extend(sqlite_fts_with(&with_categories(), NOT_DEFERRED, &format!(", {PREFIXES}")));
    s.push("ALTER TABLE listings DROP COLUMN value_tokens".to_owned());
    s
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Sqlite, &up()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Sqlite, &down()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_holds_no_ascii_letter_and_tells_values_apart() {
        let growing = value_token(VALUE_MARKS[0], "growing");
        assert_eq!(growing, "\u{E001}67726\u{E00F}77696\u{E00E}67");
        for v in ["growing", "grow", "Free", "free", "one-time purchase", "Ünïcode", "US"] {
            let t = value_token(VALUE_MARKS[1], v);
            assert!(!t.chars().any(|c| c.is_ascii_alphabetic()), "{v}: {t}");
            assert_eq!(t.chars().count(), 1 + 2 * v.len(), "{v}: {t}");
        }
        assert_ne!(value_token(VALUE_MARKS[0], "grow"), value_token(VALUE_MARKS[0], "growing"));
        assert_ne!(value_token(VALUE_MARKS[0], "US"), value_token(VALUE_MARKS[2], "US"));
    }

    #[test]
    fn the_update_trigger_watches_the_values_and_indexes_their_tokens() {
        let up = up();
        let trigger =
            up.iter().find(|s| s.contains("CREATE TRIGGER IF NOT EXISTS listings_fts_au")).expect("the update trigger");
        assert!(trigger.contains("AFTER UPDATE OF name,"), "{trigger}");
        assert!(trigger.contains("category_tokens, stage, pricing_model, country ON listings"), "{trigger}");
        assert!(trigger.contains("old.value_tokens") && trigger.contains("new.value_tokens"), "{trigger}");
        assert!(!trigger.contains("OF value_tokens") && !trigger.contains(", value_tokens ON"), "{trigger}");
        assert!(up.iter().any(|s| s.contains("value_tokens, content='listings'") && s.ends_with("prefix='1 2')")));
    }
}
