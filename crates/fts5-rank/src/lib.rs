//! bm25 for SQLite FTS5, with each phrase's document count read from a table.
//!
//! FTS5's `bm25()` scores a row by how often the query's phrases occur in each column (weighted) and
//! by how rare each phrase is in the whole table (its IDF). To learn how rare a phrase is, bm25
//! counts the rows that contain it, walking the phrase's whole doclist once per query, before it
//! scores the first row. A word on 427 000 of a million rows costs 7.8 ms that way, even if only
//! 1 000 rows are then scored.
//!
//! The function registered here computes the same score with the same constants (k1 = 1.2,
//! b = 0.75, bm25's IDF floor). The difference is where a phrase's row count comes from. For a
//! phrase of one token, it is one indexed lookup in a table of terms that its owner keeps from
//! `fts5vocab`. For a phrase the table does not know (several tokens, or a term newer than the
//! table), it is counted as bm25 counts it. With a current table the two functions give the same
//! numbers (the tests compare them); a stale count only shifts a phrase's IDF.
//!
//! A row's length (its tokens, for bm25's length normalization) is FTS5's to look up, one statement
//! per row on the table's `_docsize` shadow table: at 1 000 ranked rows that was a third of a
//! search's CPU. [`register_sized`] registers a variant that takes the row's `_docsize.sz` record as
//! an argument instead, read by the caller's own join, which costs an index step of the query.
//!
//! Prefix phrases (`"wor"*`) are not for this function: their token would be looked up as a whole
//! term. Use bm25 for queries that have them.
//!
//! This is the workspace's one crate with `unsafe` code: FTS5 auxiliary functions exist only in
//! SQLite's C API, and no maintained crate wraps them.

use rusqlite::ffi;
use std::ffi::{CString, c_int, c_void};
use std::ptr::{NonNull, null_mut};

/// Registers the ranking function `name` on `conn`. It is called like bm25, `name(table, w0, w1, …)`,
/// with one weight per column (missing weights are 1.0), and returns bm25's value (lower ranks
/// first). `lookup` is a statement with one parameter, a term as the tokenizer writes it; its
/// first row's first column is the number of rows that contain the term. If it returns no row, the
/// term is counted in the index.
pub fn register(conn: &rusqlite::Connection, name: &str, lookup: &str) -> rusqlite::Result<()> {
    // SAFETY: `conn.handle()` is the open connection `conn` holds. The borrow keeps it open for the
    // call, and a `Connection` is used by one thread at a time.
    unsafe { register_with(conn.handle(), name, lookup, Lengths::Looked) }
}

/// [`register`], for a function called `name(table, sz, w0, w1, …)`: `sz` is the current row's record
/// in the table's `<table>_docsize` shadow table (`sz`, one SQLite varint per column, as SQLite
/// documents it), which the caller joins on the row's rowid. The row's length is read from it instead
/// of looked up by FTS5 for each row. A NULL or malformed `sz` (no such row, or a table made with
/// `columnsize=0`) falls back to FTS5's lookup, so the score is bm25's either way.
pub fn register_sized(conn: &rusqlite::Connection, name: &str, lookup: &str) -> rusqlite::Result<()> {
    // SAFETY: as in `register`.
    unsafe { register_with(conn.handle(), name, lookup, Lengths::Given) }
}

/// [`register`] for a connection given by its raw handle (another driver's connection).
///
/// # Safety
/// `db` must be an open SQLite connection (of the same SQLite library as `rusqlite::ffi`) that no
/// other thread uses during the call.
pub unsafe fn register_raw(db: *mut ffi::sqlite3, name: &str, lookup: &str) -> rusqlite::Result<()> {
    // SAFETY: the caller's promise, passed on.
    unsafe { register_with(db, name, lookup, Lengths::Looked) }
}

/// # Safety
/// As [`register_raw`].
unsafe fn register_with(db: *mut ffi::sqlite3, name: &str, lookup: &str, lengths: Lengths) -> rusqlite::Result<()> {
    let name = CString::new(name).map_err(|_| misuse("a function name with a NUL byte"))?;
    let lookup = CString::new(lookup).map_err(|_| misuse("a lookup statement with a NUL byte"))?;
    // SAFETY: the caller promises `db` is open and ours for the call.
    let api = unsafe { fts5_api(db) }?;
    let data = Box::into_raw(Box::new(Registered { lookup, lengths }));
    // SAFETY: `api` is the connection's fts5_api, valid while it is open. FTS5 copies `name`. It
    // keeps `data` until the function is replaced or the connection closes, and then frees it with
    // `drop_registered`, which takes back the Box made above.
    let rc = unsafe {
        let create = (*api).xCreateFunction.ok_or_else(|| misuse("FTS5 without xCreateFunction"))?;
        create(api, name.as_ptr(), data.cast(), Some(rank), Some(drop_registered))
    };
    if rc != ffi::SQLITE_OK {
        // SAFETY: FTS5 did not take `data` (xDestroy is not called on failure), so it is still ours.
        drop(unsafe { Box::from_raw(data) });
        return Err(failure(rc, "FTS5 did not register the ranking function"));
    }
    Ok(())
}

/// Registers the function `name(table)` on `conn`: the term the index matches for a query of one
/// phrase of one token (`"invoices"` is `invoic` once stemmed), so that the caller can look up what
/// it keeps per term; NULL for any other query (several phrases, a phrase of several tokens). Called
/// in a full-text query, once per matching row (`… WHERE t MATCH ?1 LIMIT 1` asks once). Not for a
/// prefix phrase (`"wor"*`), whose token stands for every term that begins with it.
pub fn register_query_term(conn: &rusqlite::Connection, name: &str) -> rusqlite::Result<()> {
    let name = CString::new(name).map_err(|_| misuse("a function name with a NUL byte"))?;
    // SAFETY: `conn.handle()` is the open connection `conn` holds, ours for the call (see `register`).
    let api = unsafe { fts5_api(conn.handle()) }?;
    // SAFETY: `api` is the connection's fts5_api; FTS5 copies `name`; the function keeps no data.
    let rc = unsafe {
        let create = (*api).xCreateFunction.ok_or_else(|| misuse("FTS5 without xCreateFunction"))?;
        create(api, name.as_ptr(), null_mut(), Some(query_term), None)
    };
    if rc != ffi::SQLITE_OK {
        return Err(failure(rc, "FTS5 did not register the query-term function"));
    }
    Ok(())
}

/// The function [`register_query_term`] registers.
unsafe extern "C" fn query_term(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n_args: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes its extension API and this row's context, valid for the call.
    let api = unsafe { &*api };
    let token = || -> Result<Option<(*const std::ffi::c_char, c_int)>, c_int> {
        // xQueryToken came with version 3 (SQLite 3.43).
        if api.iVersion < 3 {
            return Ok(None);
        }
        // SAFETY: the current row's context; phrase 0 exists when the count is 1.
        unsafe {
            if entry(api.xPhraseCount)?(fts) != 1 || entry(api.xPhraseSize)?(fts, 0) != 1 {
                return Ok(None);
            }
            let (mut token, mut len): (*const std::ffi::c_char, c_int) = (std::ptr::null(), 0);
            ok(entry(api.xQueryToken)?(fts, 0, 0, &raw mut token, &raw mut len))?;
            Ok(Some((token, len)))
        }
    };
    // SAFETY: `ctx` is this call's result context; the token's bytes are FTS5's for the query, and
    // SQLITE_TRANSIENT makes SQLite copy them before returning.
    unsafe {
        match token() {
            Ok(Some((t, len))) if !t.is_null() => ffi::sqlite3_result_text(ctx, t, len, ffi::SQLITE_TRANSIENT()),
            Ok(_) => ffi::sqlite3_result_null(ctx),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// What a registration keeps: the statement that reads a term's row count, and where a row's length
/// comes from.
struct Registered {
    lookup: CString,
    lengths: Lengths,
}

/// Where a registered function reads a row's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lengths {
    /// FTS5 looks it up (`xColumnSize`); every argument after the table is a weight.
    Looked,
    /// The first argument after the table is the row's `_docsize.sz` record; the weights follow it.
    Given,
}

/// The sum of the SQLite varints in `record` (a `_docsize.sz`: one per column), or None if it is empty
/// or does not end on a whole varint. SQLite's varint: big-endian groups of 7 bits, each byte but the last with its
/// high bit set; a ninth byte gives all 8 of its bits.
fn record_tokens(record: &[u8]) -> Option<i64> {
    let (mut total, mut value, mut len) = (0i64, 0u64, 0usize);
    for &byte in record {
        len += 1;
        if len == 9 {
            value = (value << 8) | u64::from(byte);
        } else {
            value = (value << 7) | u64::from(byte & 0x7f);
            if byte & 0x80 != 0 {
                continue;
            }
        }
        total = total.checked_add(i64::try_from(value).ok()?)?;
        (value, len) = (0, 0);
    }
    (len == 0 && !record.is_empty()).then_some(total)
}

unsafe extern "C" fn drop_registered(p: *mut c_void) {
    // SAFETY: `p` is the `Box<Registered>` that `register_raw` handed to FTS5, freed once, here.
    drop(unsafe { Box::from_raw(p.cast::<Registered>()) });
}

/// The connection's `fts5_api`, asked for as SQLite documents: `SELECT fts5(?1)` with a pointer bound.
///
/// # Safety
/// `db` must be an open connection that no other thread uses during the call.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = null_mut();
    // SAFETY: `db` is open (caller); the statement text is NUL-terminated and `stmt` receives the
    // prepared statement or null.
    let rc = unsafe { ffi::sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &raw mut stmt, null_mut()) };
    if rc != ffi::SQLITE_OK || stmt.is_null() {
        return Err(failure(rc, "this SQLite has no FTS5"));
    }
    // SAFETY: `stmt` is the statement prepared above; `api` outlives the step that writes it, and the
    // pointer type is the one FTS5 looks for. The statement is finalized once, here.
    unsafe {
        ffi::sqlite3_bind_pointer(stmt, 1, (&raw mut api).cast(), c"fts5_api_ptr".as_ptr(), None);
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
    }
    match NonNull::new(api) {
        // xCreateFunction is in every version of the struct; version 3 (SQLite 3.43) added the
        // xQueryToken this function relies on, checked per query.
        Some(api) => Ok(api.as_ptr()),
        None => Err(failure(ffi::SQLITE_ERROR, "this SQLite has no FTS5")),
    }
}

fn misuse(what: &'static str) -> rusqlite::Error {
    failure(ffi::SQLITE_MISUSE, what)
}

fn failure(rc: c_int, what: &'static str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some(what.to_owned()))
}

/// bm25's constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What one query keeps between its rows (FTS5 auxiliary data, freed with the query).
struct Query {
    /// Average tokens per row.
    avgdl: f64,
    /// Each phrase's inverse document frequency.
    idf: Vec<f64>,
    /// Scratch: each phrase's weighted frequency in the current row.
    freq: Vec<f64>,
}

unsafe extern "C" fn drop_query(p: *mut c_void) {
    // SAFETY: `p` is the `Box<Query>` handed to xSetAuxdata in `query_of`, freed once, here.
    drop(unsafe { Box::from_raw(p.cast::<Query>()) });
}

/// The ranking function FTS5 calls once per row.
unsafe extern "C" fn rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_args: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes its extension API and this row's context, valid for the call, and
    // `n_args` values at `args`.
    let score = unsafe { score(&*api, fts, ctx, n_args, args) };
    // SAFETY: `ctx` is this call's result context.
    unsafe {
        match score {
            Ok(s) => ffi::sqlite3_result_double(ctx, -s),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// An FTS5 API entry, or SQLITE_MISUSE if this SQLite's struct lacks it.
fn entry<T>(f: Option<T>) -> Result<T, c_int> {
    f.ok_or(ffi::SQLITE_MISUSE)
}

fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK { Ok(()) } else { Err(rc) }
}

/// bm25's score of the current row (positive: the caller negates it, as bm25 does).
///
/// # Safety
/// The arguments are those FTS5 passed to [`rank`].
unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_args: c_int,
    args: *mut *mut ffi::sqlite3_value,
) -> Result<f64, c_int> {
    // SAFETY: passed through from FTS5's call.
    let query = unsafe { query_of(api, fts, ctx) }?;
    query.freq.fill(0.0);
    // SAFETY: xUserData gives back the `Registered` this function was created with (see `query_of`).
    let registered = unsafe { &*entry(api.xUserData)?(fts).cast::<Registered>() };
    // The row's length from the record the caller passed, if it did; the weights follow it.
    let (given, args, n_args) = match registered.lengths {
        Lengths::Looked => (None, args, n_args),
        Lengths::Given if n_args < 1 => (None, args, 0),
        // SAFETY: `args` holds `n_args` ≥ 1 values. A blob's bytes are valid until the value changes,
        // which it does not during this call; an empty blob may be a null pointer.
        Lengths::Given => unsafe {
            let sz = *args;
            let record = match ffi::sqlite3_value_type(sz) {
                ffi::SQLITE_BLOB => {
                    let bytes = ffi::sqlite3_value_blob(sz).cast::<u8>();
                    let len = usize::try_from(ffi::sqlite3_value_bytes(sz)).unwrap_or(0);
                    if bytes.is_null() { None } else { record_tokens(std::slice::from_raw_parts(bytes, len)) }
                }
                _ => None,
            };
            (record, args.add(1), n_args - 1)
        },
    };
    let mut n_inst: c_int = 0;
    // SAFETY: `fts` is the current row's context; the out-pointer is a local.
    ok(unsafe { entry(api.xInstCount)?(fts, &raw mut n_inst) })?;
    for i in 0..n_inst {
        let (mut phrase, mut column, mut offset): (c_int, c_int, c_int) = (0, 0, 0);
        // SAFETY: `i` is below xInstCount; the out-pointers are locals.
        ok(unsafe { entry(api.xInst)?(fts, i, &raw mut phrase, &raw mut column, &raw mut offset) })?;
        let weight = if column < n_args {
            // SAFETY: `column` is in 0..n_args, so `args.add(column)` is one of FTS5's values.
            unsafe { ffi::sqlite3_value_double(*args.add(column as usize)) }
        } else {
            1.0
        };
        if let Some(f) = query.freq.get_mut(phrase as usize) {
            *f += weight;
        }
    }
    let tokens = match given {
        Some(t) => t as f64,
        None => {
            let mut tokens: c_int = 0;
            // SAFETY: as above; -1 asks for the row's tokens in all columns.
            ok(unsafe { entry(api.xColumnSize)?(fts, -1, &raw mut tokens) })?;
            f64::from(tokens)
        }
    };
    let length_norm = 1.0 - B + B * tokens / query.avgdl;
    Ok(query.idf.iter().zip(&query.freq).map(|(idf, f)| idf * (f * (K1 + 1.0)) / (f + K1 * length_norm)).sum())
}

/// The current query's data, computed at its first row and kept by FTS5 for the others.
///
/// # Safety
/// The arguments are those FTS5 passed to [`rank`]; the reference lives no longer than that call.
unsafe fn query_of<'q>(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
) -> Result<&'q mut Query, c_int> {
    // SAFETY: `fts` is the current row's context. Slot 0 of its auxiliary data holds only the
    // `Box<Query>` this function puts there.
    let kept = unsafe { entry(api.xGetAuxdata)?(fts, 0) }.cast::<Query>();
    if let Some(mut kept) = NonNull::new(kept) {
        // SAFETY: FTS5 keeps the Box until the query ends, and a query's rows are scored one at a
        // time on one thread, so this is the only reference while the row is scored.
        return Ok(unsafe { kept.as_mut() });
    }
    let (mut rows, mut tokens): (i64, i64) = (0, 0);
    // SAFETY: the current row's context; out-pointers are locals.
    unsafe {
        ok(entry(api.xRowCount)?(fts, &raw mut rows))?;
        ok(entry(api.xColumnTotalSize)?(fts, -1, &raw mut tokens))?;
    }
    let avgdl = if rows > 0 && tokens > 0 { tokens as f64 / rows as f64 } else { 1.0 };
    // SAFETY: the current row's context.
    let phrases = unsafe { entry(api.xPhraseCount)?(fts) }.max(0);
    // SAFETY: xUserData gives back the `Registered` this function was created with, which FTS5
    // keeps while the function exists.
    let registered = unsafe { &*entry(api.xUserData)?(fts).cast::<Registered>() };
    // SAFETY: the context's connection, open while FTS5 runs the query.
    let db = unsafe { ffi::sqlite3_context_db_handle(ctx) };
    let mut lookup = Lookup::prepare(db, registered)?;
    let mut idf = Vec::with_capacity(phrases as usize);
    for phrase in 0..phrases {
        // SAFETY: `phrase` is below xPhraseCount; the other arguments come from FTS5's call.
        let hits = unsafe { documents(api, fts, phrase, &mut lookup) }?;
        let value = (((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
        // bm25's floor: a phrase in more than half of the rows still counts a little. (A stale count
        // above the row count makes the logarithm NaN: the floor too.)
        idf.push(if value.is_nan() || value <= 0.0 { 1e-6 } else { value });
    }
    drop(lookup);
    let query = Box::into_raw(Box::new(Query { avgdl, freq: vec![0.0; idf.len()], idf }));
    // SAFETY: FTS5 takes the Box and frees it with `drop_query` when the query ends (or at once, if
    // this call fails).
    ok(unsafe { entry(api.xSetAuxdata)?(fts, query.cast(), Some(drop_query)) })?;
    // SAFETY: just stored; FTS5 keeps it for this query and nothing else refers to it yet.
    Ok(unsafe { &mut *query })
}

/// How many rows contain `phrase`: the lookup table's count for a phrase of one token it knows,
/// else counted in the index as bm25 does.
///
/// # Safety
/// As [`query_of`]; `phrase` is below the query's phrase count.
unsafe fn documents(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    phrase: c_int,
    lookup: &mut Lookup,
) -> Result<i64, c_int> {
    // SAFETY: the current row's context and a phrase below xPhraseCount.
    let size = unsafe { entry(api.xPhraseSize)?(fts, phrase) };
    if size == 1 && api.iVersion >= 3 {
        let (mut token, mut len): (*const std::ffi::c_char, c_int) = (std::ptr::null(), 0);
        // SAFETY: token 0 of a one-token phrase; FTS5 points `token` at `len` bytes it owns for
        // the query, which `Lookup::count` copies before returning.
        ok(unsafe { entry(api.xQueryToken)?(fts, phrase, 0, &raw mut token, &raw mut len) })?;
        // SAFETY: `token` is valid for `len` bytes (above).
        if let Some(n) = unsafe { lookup.count(token, len) }? {
            return Ok(n);
        }
    }
    let mut hits: i64 = 0;
    // SAFETY: `count_row` adds one to the i64 it is given for each matching row; `hits` outlives
    // the call.
    ok(unsafe { entry(api.xQueryPhrase)?(fts, phrase, (&raw mut hits).cast(), Some(count_row)) })?;
    Ok(hits)
}

unsafe extern "C" fn count_row(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    hits: *mut c_void,
) -> c_int {
    // SAFETY: `documents` passes a pointer to its local i64.
    unsafe { *hits.cast::<i64>() += 1 };
    ffi::SQLITE_OK
}

/// The registration's lookup statement, prepared for one query and finalized after it.
struct Lookup {
    stmt: *mut ffi::sqlite3_stmt,
}

impl Lookup {
    fn prepare(db: *mut ffi::sqlite3, registered: &Registered) -> Result<Self, c_int> {
        let mut stmt: *mut ffi::sqlite3_stmt = null_mut();
        // SAFETY: `db` is the open connection running the query; the text is NUL-terminated.
        ok(unsafe { ffi::sqlite3_prepare_v2(db, registered.lookup.as_ptr(), -1, &raw mut stmt, null_mut()) })?;
        if stmt.is_null() {
            // An empty statement: nothing to look up with.
            return Err(ffi::SQLITE_MISUSE);
        }
        Ok(Self { stmt })
    }

    /// The first column of the lookup's first row for the term at `token` (`len` bytes), if any.
    ///
    /// # Safety
    /// `token` must be valid for `len` bytes.
    unsafe fn count(&mut self, token: *const std::ffi::c_char, len: c_int) -> Result<Option<i64>, c_int> {
        // SAFETY: `self.stmt` is prepared; SQLITE_TRANSIENT makes SQLite copy the bytes before the
        // bind returns. The statement is reset before the next term.
        unsafe {
            ok(ffi::sqlite3_bind_text(self.stmt, 1, token, len, ffi::SQLITE_TRANSIENT()))?;
            let found = match ffi::sqlite3_step(self.stmt) {
                ffi::SQLITE_ROW => Some(ffi::sqlite3_column_int64(self.stmt, 0)),
                ffi::SQLITE_DONE => None,
                rc => {
                    ffi::sqlite3_reset(self.stmt);
                    return Err(rc);
                }
            };
            ffi::sqlite3_reset(self.stmt);
            Ok(found)
        }
    }
}

impl Drop for Lookup {
    fn drop(&mut self) {
        // SAFETY: prepared in `Lookup::prepare` and finalized once, here.
        unsafe { ffi::sqlite3_finalize(self.stmt) };
    }
}

impl std::fmt::Debug for Lookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lookup").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    const WEIGHTS: &str = "10.0, 5.0, 1.0";

    fn directory() -> Connection {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch(
            "CREATE VIRTUAL TABLE docs USING fts5(name, tagline, body, tokenize='porter unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE docs_vocab USING fts5vocab(docs, 'row');
             CREATE TABLE terms(term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;",
        )
        .expect("schema");
        let rows = [
            ("Larkhub", "Workflow automation for teams", "Automate the workflows your team runs every day."),
            ("Inkwell", "Notes that write themselves", "A notebook with running summaries and workflows."),
            ("Tidepool", "Shared inbox", "Triage customer email as a team, with rules and automations."),
            ("Running Start", "Onboarding checklists", "Checklists that keep new hires running from day one."),
            ("Quartz", "Time tracking", "Track time per project; invoices from the hours."),
            ("Beacon", "Status pages", "Status pages and incident workflow for small teams."),
        ];
        for (name, tagline, body) in rows {
            conn.execute("INSERT INTO docs(name, tagline, body) VALUES (?1, ?2, ?3)", (name, tagline, body))
                .expect("insert");
        }
        conn.execute_batch("INSERT INTO terms SELECT term, doc FROM docs_vocab").expect("terms");
        register(&conn, "counted_bm25", "SELECT docs FROM terms WHERE term = ?1").expect("register");
        conn
    }

    /// What `query_term` says of `query`, asked on its first match.
    fn term_of(conn: &Connection, query: &str) -> Option<String> {
        conn.query_row("SELECT query_term(docs) FROM docs WHERE docs MATCH ?1 LIMIT 1", [query], |r| r.get(0))
            .expect("query")
    }

    #[test]
    fn a_one_word_query_names_the_term_the_index_matches() {
        let conn = directory();
        register_query_term(&conn, "query_term").expect("register");
        // Stemmed as the rows were: the term is the index's, not the typed word.
        assert_eq!(term_of(&conn, "\"invoices\"").as_deref(), Some("invoic"));
        assert_eq!(term_of(&conn, "workflows").as_deref(), Some("workflow"));
        // With a column filter, still one phrase of one token.
        assert_eq!(term_of(&conn, "name:larkhub").as_deref(), Some("larkhub"));
        // Anything else is no one term.
        for query in ["team workflow", "\"shared inbox\"", "team OR workflow", "team AND workflow"] {
            assert_eq!(term_of(&conn, query), None, "{query}");
        }
        // The term it names is in the index, with the count the vocabulary gives it.
        let docs: i64 = conn
            .query_row("SELECT doc FROM docs_vocab WHERE term = ?1", [term_of(&conn, "automations").unwrap()], |r| {
                r.get(0)
            })
            .expect("in the vocabulary");
        assert_eq!(docs, 2, "Larkhub's automation and automate, Tidepool's automations");
        assert!(register_query_term(&conn, "bad\0name").is_err());
    }

    /// Each matching row's (rowid, bm25, counted_bm25) for `query`.
    fn scores(conn: &Connection, query: &str) -> Vec<(i64, f64, f64)> {
        let sql = format!(
            "SELECT rowid, bm25(docs, {WEIGHTS}), counted_bm25(docs, {WEIGHTS}) FROM docs WHERE docs MATCH ?1 ORDER BY rowid"
        );
        let mut stmt = conn.prepare(&sql).expect("prepare");
        let rows = stmt.query_map([query], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).expect("query");
        rows.collect::<Result<_, _>>().expect("rows")
    }

    fn assert_same(conn: &Connection, query: &str) {
        let rows = scores(conn, query);
        assert!(!rows.is_empty(), "{query} matches nothing");
        for (id, bm25, counted) in rows {
            assert!((bm25 - counted).abs() < 1e-9, "{query}, row {id}: bm25 {bm25}, counted {counted}");
        }
    }

    #[test]
    fn with_current_counts_it_scores_as_bm25_does() {
        let conn = directory();
        for query in [
            "workflow",
            "team",
            "running",
            "team AND workflow",
            "\"running\" OR \"workflows\" OR \"status\"",
            "automate AND (team OR teams)",
            "\"status pages\"",
            "larkhub OR quartz",
        ] {
            assert_same(&conn, query);
        }
    }

    #[test]
    fn the_counts_come_from_the_table() {
        let conn = directory();
        let before = scores(&conn, "team");
        // The stemmed term, as the tokenizer writes it: a lookup of the typed word would miss.
        let changed = conn.execute("UPDATE terms SET docs = 1 WHERE term = 'team'", []).expect("update");
        assert_eq!(changed, 1);
        let after = scores(&conn, "team");
        assert_eq!(before.len(), after.len());
        for ((id, bm25, _), (_, _, counted)) in before.iter().zip(&after) {
            // One row in six holds the term now: a rarer term, a larger score (bm25's is negated).
            assert!(counted < bm25, "row {id}: {counted} is not above bm25's {bm25}");
        }
    }

    #[test]
    fn a_term_the_table_does_not_know_is_counted_in_the_index() {
        let conn = directory();
        conn.execute("DELETE FROM terms WHERE term IN ('workflow', 'team')", []).expect("delete");
        assert_same(&conn, "workflow");
        assert_same(&conn, "team AND workflow");
        conn.execute("DELETE FROM terms", []).expect("delete all");
        assert_same(&conn, "running OR status");
    }

    #[test]
    fn a_lookup_that_fails_is_an_error_of_the_query() {
        let conn = directory();
        register(&conn, "broken_bm25", "SELECT docs FROM no_such_table WHERE term = ?1").expect("register");
        let err = conn
            .query_row("SELECT broken_bm25(docs) FROM docs WHERE docs MATCH 'team'", [], |r| r.get::<_, f64>(0))
            .expect_err("a lookup of a missing table");
        assert!(matches!(err, rusqlite::Error::SqliteFailure(..)), "{err:?}");
    }

    /// Each matching row's (rowid, bm25, sized_bm25 with the row's docsize record joined).
    fn sized_scores(conn: &Connection, query: &str) -> Vec<(i64, f64, f64)> {
        let sql = format!(
            "SELECT docs.rowid, bm25(docs, {WEIGHTS}), sized_bm25(docs, d.sz, {WEIGHTS}) FROM docs \
             LEFT JOIN docs_docsize d ON d.id = docs.rowid WHERE docs MATCH ?1 ORDER BY docs.rowid"
        );
        let mut stmt = conn.prepare(&sql).expect("prepare");
        let rows = stmt.query_map([query], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).expect("query");
        rows.collect::<Result<_, _>>().expect("rows")
    }

    fn assert_sized_same(conn: &Connection, query: &str) -> usize {
        let rows = sized_scores(conn, query);
        assert!(!rows.is_empty(), "{query} matches nothing");
        for &(id, bm25, sized) in &rows {
            assert!((bm25 - sized).abs() < 1e-9, "{query}, row {id}: bm25 {bm25}, sized {sized}");
        }
        rows.len()
    }

    #[test]
    fn with_the_row_s_record_given_it_scores_as_bm25_does_at_every_length() {
        let conn = directory();
        register_sized(&conn, "sized_bm25", "SELECT docs FROM terms WHERE term = ?1").expect("register");
        // Rows whose columns need one, two and three bytes to record their length (127, 16 383).
        for (name, words) in [("Short", 3), ("Middling", 130), ("Long", 200), ("Huge", 17_000)] {
            let body = vec!["workflow notes"; words / 2].join(" ");
            conn.execute("INSERT INTO docs(name, tagline, body) VALUES (?1, 'workflow', ?2)", (name, body))
                .expect("insert");
        }
        conn.execute_batch("DELETE FROM terms; INSERT INTO terms SELECT term, doc FROM docs_vocab").expect("counts");
        let lengths: Vec<i64> = conn
            .prepare("SELECT length(sz) FROM docs_docsize WHERE id > 6 ORDER BY id")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("records");
        assert_eq!(lengths, [3, 4, 4, 5], "1 + 1 + 1, 1 + 1 + 2 twice, 1 + 1 + 3 bytes");
        for query in ["workflow", "team", "workflow AND notes", "\"status pages\" OR huge", "running OR long"] {
            assert_sized_same(&conn, query);
        }
        // No record (NULL: a LEFT JOIN that found none), or one that is not a record (cut short, empty,
        // not a blob): the row's length is looked up as bm25 does.
        let matches = assert_sized_same(&conn, "workflow");
        for sz in ["NULL", "x'81'", "x''", "'text'", "42"] {
            let sql = format!(
                "SELECT bm25(docs, {WEIGHTS}), sized_bm25(docs, {sz}, {WEIGHTS}) FROM docs WHERE docs MATCH 'workflow'"
            );
            let mut stmt = conn.prepare(&sql).expect("prepare");
            let rows: Vec<(f64, f64)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows");
            assert_eq!(rows.len(), matches, "{sz}");
            assert!(rows.iter().all(|(a, b)| (a - b).abs() < 1e-9), "{sz}: {rows:?}");
        }
    }

    #[test]
    fn a_record_s_varints_are_read_as_sqlite_writes_them() {
        assert_eq!(record_tokens(&[5, 0, 7]), Some(12));
        // 0x81 0x00 is 128; 0x81 0x80 0x00 is 16 384.
        assert_eq!(record_tokens(&[0x81, 0x00, 3]), Some(131));
        assert_eq!(record_tokens(&[0x81, 0x80, 0x00]), Some(16_384));
        // The ninth byte gives all eight bits.
        assert_eq!(record_tokens(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xff]), Some(255));
        // Cut short, or nothing at all: no length.
        assert_eq!(record_tokens(&[0x81]), None);
        assert_eq!(record_tokens(&[3, 0x80]), None);
        assert_eq!(record_tokens(&[]), None);
        // Past i64: no length either.
        assert_eq!(record_tokens(&[0xff; 9]), None);
    }

    #[test]
    fn names_and_statements_with_nul_bytes_are_refused() {
        let conn = directory();
        assert!(register(&conn, "a\0b", "SELECT 1").is_err());
        assert!(register(&conn, "ok_name", "SELECT\0 1").is_err());
    }
}
