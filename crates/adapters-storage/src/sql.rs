//! A small builder for the raw statements sea-query cannot express portably (full-text search):
//! it writes `?` placeholders on SQLite and `$n` on PostgreSQL, and keeps values beside them.

use sea_orm::{DbBackend, Statement, Value};

#[derive(Debug)]
pub struct RawQuery {
    backend: DbBackend,
    sql: String,
    values: Vec<Value>,
}

impl RawQuery {
    pub fn new(backend: DbBackend) -> Self {
        Self { backend, sql: String::new(), values: Vec::new() }
    }

    pub fn backend(&self) -> DbBackend {
        self.backend
    }

    /// Appends SQL text (never user input).
    pub fn sql(&mut self, s: &str) -> &mut Self {
        self.sql.push_str(s);
        self
    }

    /// Appends a placeholder bound to `v`.
    pub fn bind(&mut self, v: impl Into<Value>) -> &mut Self {
        self.values.push(v.into());
        match self.backend {
            DbBackend::Postgres => {
                let n = self.values.len();
                self.sql.push_str(&format!("${n}"));
            }
            _ => self.sql.push('?'),
        }
        self
    }

    /// Appends `(p1, p2, …)`, a placeholder bound to each value (for `IN`; never call it with none).
    pub fn bind_list<V: Into<Value>>(&mut self, values: impl IntoIterator<Item = V>) -> &mut Self {
        self.sql.push('(');
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.sql.push_str(", ");
            }
            self.bind(v);
        }
        self.sql.push(')');
        self
    }

    /// Appends a row count of ours (a `LIMIT` or `OFFSET`; never input), written out, not bound:
    /// - SQLite plans a statement again at every run whose `LIMIT` or `OFFSET` is bound (it plans with
    ///   their values): 34 µs instead of 17 for a board page, measured on SQLite 3.51;
    /// - PostgreSQL's generic plan for a bound `OFFSET` guesses it skips a tenth of the rows, so its
    ///   plan cache keeps planning the statement at every run instead (a custom plan): the weekly
    ///   board ran 7 700 times a second that way and 17 500 with one plan (pgbench, same sitting).
    ///
    /// Each page number is then a statement of its own in a connection's cache, prepared once.
    pub fn count_of_rows(&mut self, n: i64) -> &mut Self {
        self.sql(&n.to_string())
    }

    /// Appends a string constant of ours (a status, a column name: never input) as a literal, for the
    /// reason [`RawQuery::count_of_rows`] gives: a statement without parameters has one plan.
    pub fn constant(&mut self, s: &'static str) -> &mut Self {
        assert!(!s.contains('\''), "a constant of ours has no quote: {s}");
        self.sql("'").sql(s).sql("'")
    }

    /// Appends a date as a literal (`'2026-11-23'`, the text sqlx stores on SQLite and PostgreSQL
    /// reads as a date), for a bounded set of dates such as launch weeks (see [`RawQuery::constant`]).
    pub fn date_constant(&mut self, d: chrono::NaiveDate) -> &mut Self {
        self.sql("'").sql(&d.to_string()).sql("'")
    }

    /// Appends `LIMIT … OFFSET …` for a page.
    pub fn page(&mut self, page: domain::paging::PageRequest) -> &mut Self {
        self.sql(" LIMIT ")
            .count_of_rows(i64::from(page.per_page()))
            .sql(" OFFSET ")
            .count_of_rows(page.offset() as i64)
    }

    pub fn build(&self) -> Statement {
        Statement::from_sql_and_values(self.backend, self.sql.clone(), self.values.clone())
    }
}

/// The entity's columns as a select list, each prefixed by `alias.` when an alias is given: raw
/// statements name their columns instead of `*`, so a column added by a newer migration (a rolling
/// deploy) never changes the shape of a row an older instance reads — sqlx caches a statement's
/// columns, and SQLite re-prepares `*` with the new ones.
pub fn columns<E: sea_orm::EntityTrait>(alias: &str) -> String {
    use sea_orm::{IdenStatic, Iterable};
    let prefix = if alias.is_empty() { String::new() } else { format!("{alias}.") };
    E::Column::iter().map(|c| format!("{prefix}{}", c.as_str())).collect::<Vec<_>>().join(", ")
}

/// A person's search words, safe for a full-text query: only letters and digits survive, lowercased,
/// at most ten words. Empty when no word is left.
pub fn search_words(q: &str) -> Vec<String> {
    q.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).take(10).map(str::to_lowercase).collect()
}

/// Turns a person's search words into a safe full-text query: all words required, the last one as a
/// prefix (so results appear while typing). `None` when no word is left.
pub fn fts_query(backend: DbBackend, q: &str) -> Option<String> {
    sqlite_or_pg_query(backend, &search_words(q), None)
}

/// The words PostgreSQL's `english` text search configuration drops (its `english.stop`, as PostgreSQL
/// ships it), separated by spaces.
const PG_ENGLISH_STOP_WORDS: &str = concat!(
    "a about above after again against all am an and any are as at be because been before being ",
    "below between both but by can did do does doing don down during each few for from further had ",
    "has have having he her here hers herself him himself his how i if in into is it its itself just ",
    "me more most my myself no nor not now of off on once only or other our ours ourselves out over ",
    "own s same she should so some such t than that the their theirs them themselves then there ",
    "these they this those through to too under until up very was we were what when where which ",
    "while who whom why will with you your yours yourself yourselves",
);

/// Writes the PostgreSQL `tsquery` of `tsq` (what [`fts_query`] writes for PostgreSQL: `w1 & w2 & last:*`)
/// into `q`: `to_tsquery('english', …)`, except where the last word, a prefix, is one of the English stop
/// words that configuration drops (`a`, `s`, `t`, `the` …): that prefix is parsed by `simple`, which
/// keeps it, so `q=a` finds the listings with a word beginning with `a`, as SQLite and the in-memory
/// store do, instead of nothing (and `hours t` is not `hours` alone). A stop word is in no listing's
/// document (its vector drops them too), so such a prefix finds only the longer words it begins.
/// Every other query is written as before, one bound text.
pub fn pg_tsquery(q: &mut RawQuery, tsq: &str) {
    let (rest, last) = tsq.rsplit_once(" & ").unwrap_or(("", tsq));
    let stop = last.strip_suffix(":*").filter(|w| PG_ENGLISH_STOP_WORDS.split(' ').any(|s| s == *w));
    match (stop, rest) {
        (None, _) => q.sql("to_tsquery('english', ").bind(tsq.to_owned()).sql(")"),
        (Some(_), "") => q.sql("to_tsquery('simple', ").bind(last.to_owned()).sql(")"),
        (Some(_), rest) => q
            .sql("(to_tsquery('english', ")
            .bind(rest.to_owned())
            .sql(") && to_tsquery('simple', ")
            .bind(last.to_owned())
            .sql("))"),
    };
}

/// The FTS5 query for `words` with the last word's prefix spelled out as `completions`, the index's
/// terms that begin with it: `"a" AND ("b" OR "b1" OR "b2")`. The typed word itself stays in as a phrase,
/// which FTS5 stems as it stemmed the listings (`tools` finds `tool`). `None` when no word is left.
pub fn sqlite_query_completed(words: &[String], completions: &[String]) -> Option<String> {
    sqlite_or_pg_query(DbBackend::Sqlite, words, Some(completions))
}

fn sqlite_or_pg_query(backend: DbBackend, words: &[String], completions: Option<&[String]>) -> Option<String> {
    let last = words.len().checked_sub(1)?;
    let quoted = |w: &str| format!("\"{}\"", w.replace('"', "\"\""));
    let parts: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| match (backend, i == last, completions) {
            (DbBackend::Postgres, true, _) => format!("{w}:*"),
            (DbBackend::Postgres, false, _) => w.clone(),
            (_, true, Some(terms)) => {
                let mut alternatives = vec![quoted(w)];
                alternatives.extend(terms.iter().filter(|t| *t != w).map(|t| quoted(t)));
                format!("({})", alternatives.join(" OR "))
            }
            (_, true, None) => format!("{}*", quoted(w)),
            (_, false, _) => quoted(w),
        })
        .collect();
    Some(match (backend, completions) {
        (DbBackend::Postgres, _) => parts.join(" & "),
        // FTS5 reads two phrases side by side as AND, but not a phrase beside a bracketed OR.
        (_, Some(_)) => parts.join(" AND "),
        (_, None) => parts.join(" "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_last_word_postgres_drops_as_a_stop_word_is_parsed_as_typed() {
        assert_eq!(PG_ENGLISH_STOP_WORDS.split(' ').count(), 127, "one space between words");
        let written = |tsq: &str| {
            let mut q = RawQuery::new(DbBackend::Postgres);
            pg_tsquery(&mut q, tsq);
            let s = q.build();
            (s.sql, s.values.map(|v| v.0.len()).unwrap_or(0))
        };
        assert_eq!(written("hours & tools:*"), ("to_tsquery('english', $1)".to_owned(), 1));
        assert_eq!(written("a:*"), ("to_tsquery('simple', $1)".to_owned(), 1));
        assert_eq!(written("hours & t:*"), ("(to_tsquery('english', $1) && to_tsquery('simple', $2))".to_owned(), 2));
        // Only the last word, the prefix: a stop word before it is dropped as before.
        assert_eq!(written("the & tool:*"), ("to_tsquery('english', $1)".to_owned(), 1));
        assert_eq!(fts_query(DbBackend::Postgres, "Hours T").unwrap(), "hours & t:*");
    }

    #[test]
    fn placeholders_per_backend() {
        let mut q = RawQuery::new(DbBackend::Postgres);
        q.sql("a = ").bind(1i64).sql(" AND b = ").bind("x");
        assert_eq!(q.build().sql, "a = $1 AND b = $2");
        let mut s = RawQuery::new(DbBackend::Sqlite);
        s.sql("a = ").bind(1i64);
        assert_eq!(s.build().sql, "a = ?");
    }

    #[test]
    fn constants_of_ours_are_written_out_on_both_backends() {
        for backend in [DbBackend::Postgres, DbBackend::Sqlite] {
            let mut q = RawQuery::new(backend);
            let week = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
            q.sql("w = ")
                .date_constant(week)
                .sql(" AND s = ")
                .constant("live")
                .page(domain::paging::PageRequest::parse(Some(3), Some(20)).unwrap());
            let built = q.build();
            assert_eq!(built.sql, "w = '2026-11-23' AND s = 'live' LIMIT 20 OFFSET 40");
            assert!(built.values.as_ref().is_none_or(|v| v.0.is_empty()), "no parameters: {:?}", built.values);
        }
    }

    #[test]
    #[should_panic(expected = "no quote")]
    fn a_constant_with_a_quote_is_refused() {
        RawQuery::new(DbBackend::Postgres).constant("it's");
    }

    #[test]
    fn fts_queries_are_sanitised() {
        assert_eq!(
            fts_query(DbBackend::Sqlite, "Time-tracking \"AND\" OR*").unwrap(),
            "\"time\" \"tracking\" \"and\" \"or\"*"
        );
        assert_eq!(fts_query(DbBackend::Postgres, "crm tool").unwrap(), "crm & tool:*");
        assert_eq!(fts_query(DbBackend::Sqlite, " !!! "), None);
    }

    #[test]
    fn a_completed_last_word_keeps_the_typed_word_beside_its_completions() {
        let words = search_words("time Track");
        let terms = ["track".to_owned(), "tracker".to_owned(), "tracking".to_owned()];
        assert_eq!(
            sqlite_query_completed(&words, &terms).unwrap(),
            "\"time\" AND (\"track\" OR \"tracker\" OR \"tracking\")"
        );
        assert_eq!(sqlite_query_completed(&search_words("tools"), &[]).unwrap(), "(\"tools\")");
        assert_eq!(sqlite_query_completed(&[], &terms), None);
    }
}
