//! Profile reads on PostgreSQL, shared between concurrent requests: the listings asked for while
//! earlier reads run are read together, in one statement (`slug = ANY(…)`; a slug alone, `slug = $1`),
//! by a few reader tasks.
//!
//! Each request still reads its listing from the database at the time it asks (nothing is kept
//! between batches: this is not a cache). What the batch shares is what a statement costs apart
//! from its rows: the hand-off to a backend and back, the backend's executor set-up, and the wake-ups
//! on both sides. Measured with pgbench on the 100k benchmark database (2 shared cores): the profile
//! statement ran 7 000–9 000 times a second for one slug, and 2 550 times a second for 16 — about 40 000
//! profiles a second (docs/BENCHMARKS.md).
//!
//! A read on an idle service waits for nobody: an idle reader takes the slug at once, alone. Only while
//! every reader is busy do asks queue, and the next free reader takes all of them (up to
//! [`MOST_SLUGS`]). SQLite has no hand-off to share (a file's short reads run on the calling thread:
//! [`crate::inline`]) and does not use this.
//!
//! With the short reads' pipe ([`crate::pipe`]) each lane has readers of its own, tasks of the thread
//! placed on that lane, and they read on it: a request's profile is asked, read and answered on its
//! own thread, and the statements of a thread's readers go out back to back on one connection.
//! Through the pool, readers on one thread took the asks of every thread (two wake-ups of another
//! thread a read) and each statement took a pooled connection: on the 100k benchmark database
//! (seventy-third sitting, `bench/ab.sh`, PostgreSQL, three alternated rounds) get_listing ran
//! 17 400–18 400 a second that way and 23 300–24 300 this way, the whole machine's CPU a read
//! 95–98 µs against 82–85 (docs/BENCHMARKS.md). Without a pipe (TLS to another machine) one queue
//! and its readers serve every thread through the pool, as before.

use crate::listings::{ProfileRow, profile_query};
use crate::pipe::PgPipe;
use crate::store::repo_err;
use domain::ports::RepoResult;
use domain::slug::Slug;
use sea_orm::{DatabaseConnection, DbBackend, FromQueryResult};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{mpsc, oneshot};

/// Batches read at once, each on one pooled connection; the rest of the pool serves everything else.
pub const READERS: usize = 4;
/// The most slugs one statement reads.
pub const MOST_SLUGS: usize = 32;
/// Asks waiting for a reader before a new one waits to be queued.
const QUEUE: usize = 1024;

type Answer = RepoResult<Option<ProfileRow>>;

#[derive(Debug)]
struct Ask {
    slug: String,
    answer: oneshot::Sender<Answer>,
}

/// The readers of one store, started on the first read (they need the runtime the store is used on).
#[derive(Debug)]
pub(crate) struct ProfileReads {
    db: DatabaseConnection,
    /// The short reads' pipe, which the readers read on when there is one (see [`read_rows`]).
    pipe: Option<Arc<PgPipe>>,
    /// Where asks go: with a pipe, a queue and its readers for each of its lanes, started by the first
    /// thread placed on that lane and run on its runtime, so a thread's profile reads are read on its
    /// own lane by tasks of its own and wake no other thread (see [`PgPipe::lane_index`]); without
    /// one, a single queue.
    asks: Vec<Mutex<Option<mpsc::Sender<Ask>>>>,
}

impl ProfileReads {
    pub(crate) fn new(db: DatabaseConnection, pipe: Option<Arc<PgPipe>>) -> Self {
        let queues = pipe.as_ref().map_or(1, |p| p.lane_count());
        Self { db, pipe, asks: (0..queues).map(|_| Mutex::new(None)).collect() }
    }

    /// The profile row of `slug`, read in the next batch.
    pub(crate) async fn read(&self, slug: &Slug) -> RepoResult<Option<ProfileRow>> {
        if let Some(asks) = self.asks() {
            let (answer, answered) = oneshot::channel();
            if asks.send(Ask { slug: slug.as_str().to_owned(), answer }).await.is_ok()
                && let Ok(answer) = answered.await
            {
                return answer;
            }
        }
        // No reader to take it (the runtime that started them has ended; the next read starts new
        // ones on its own): read it alone.
        Ok(read_rows(&self.db, self.pipe.as_deref(), &[slug.as_str()]).await?.into_iter().next())
    }

    /// Where this thread's asks go, starting their readers on this runtime when there are none (or
    /// none left).
    fn asks(&self) -> Option<mpsc::Sender<Ask>> {
        let queue = self.pipe.as_ref().map_or(0, |p| p.lane_index());
        let mut asks = self.asks[queue].lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = asks.as_ref().filter(|tx| !tx.is_closed()) {
            return Some(tx.clone());
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        for _ in 0..READERS {
            runtime.spawn(reader(self.db.clone(), self.pipe.clone(), Arc::clone(&rx)));
        }
        *asks = Some(tx.clone());
        Some(tx)
    }
}

/// One reader: takes every ask queued (at least one, at most [`MOST_SLUGS`]), reads their listings in
/// one statement and answers each. Ends when the store is gone (every sender dropped).
async fn reader(db: DatabaseConnection, pipe: Option<Arc<PgPipe>>, asks: Arc<tokio::sync::Mutex<mpsc::Receiver<Ask>>>) {
    let mut batch = Vec::with_capacity(MOST_SLUGS);
    loop {
        if asks.lock().await.recv_many(&mut batch, MOST_SLUGS).await == 0 {
            return;
        }
        // A request that is gone (its client hung up) is not read for.
        batch.retain(|a: &Ask| !a.answer.is_closed());
        if batch.is_empty() {
            continue;
        }
        let mut slugs: Vec<&str> = batch.iter().map(|a| a.slug.as_str()).collect();
        slugs.sort_unstable();
        slugs.dedup();
        let read = read_rows(&db, pipe.as_deref(), &slugs).await;
        answer(&mut batch, read);
    }
}

/// Answers every ask of `batch` (emptying it) from its statement's rows: each its own listing's row,
/// or none; the statement's failure to all of them.
fn answer(batch: &mut Vec<Ask>, read: RepoResult<Vec<ProfileRow>>) {
    match read {
        Ok(rows) => {
            let mut rows: std::collections::HashMap<String, ProfileRow> =
                rows.into_iter().map(|r| (r.slug().to_owned(), r)).collect();
            while let Some(ask) = batch.pop() {
                // The same listing asked twice in one batch: the earlier asks get copies.
                let row = if batch.iter().any(|a| a.slug == ask.slug) {
                    rows.get(&ask.slug).cloned()
                } else {
                    rows.remove(&ask.slug)
                };
                // A requester gone meanwhile has nobody to tell.
                let _ = ask.answer.send(Ok(row));
            }
        }
        Err(e) => {
            for ask in batch.drain(..) {
                let _ = ask.answer.send(Err(e.copied()));
            }
        }
    }
}

/// The profile rows of `slugs`, on the read pipe when there is one, else (or when it cannot) through
/// the pool.
async fn read_rows(db: &DatabaseConnection, pipe: Option<&PgPipe>, slugs: &[&str]) -> RepoResult<Vec<ProfileRow>> {
    let stmt = profile_query(DbBackend::Postgres, slugs).build();
    if let Some(pipe) = pipe
        && let Some(rows) = pipe.all::<ProfileRow>(&stmt.sql, stmt.values.as_ref().map_or(&[], |v| &v.0)).await
    {
        return Ok(rows);
    }
    ProfileRow::find_by_statement(stmt).all(db).await.map_err(repo_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ports::RepoError;

    fn ask(slug: &str) -> (Ask, oneshot::Receiver<Answer>) {
        let (answer, answered) = oneshot::channel();
        (Ask { slug: slug.to_owned(), answer }, answered)
    }

    #[test]
    fn a_failed_statement_fails_each_request_of_its_batch_and_skips_the_gone() {
        let (a, mut a_rx) = ask("alpha");
        let (b, b_rx) = ask("beta");
        let (c, mut c_rx) = ask("alpha");
        drop(b_rx);
        let mut batch = vec![a, b, c];
        answer(&mut batch, Err(RepoError::Unavailable("connection lost".into())));
        assert!(batch.is_empty());
        for rx in [&mut a_rx, &mut c_rx] {
            match rx.try_recv() {
                Ok(Err(RepoError::Unavailable(e))) => assert_eq!(e.to_string(), "connection lost"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn no_rows_answer_each_request_with_none() {
        let (a, mut a_rx) = ask("alpha");
        let (b, mut b_rx) = ask("alpha");
        let mut batch = vec![a, b];
        answer(&mut batch, Ok(Vec::new()));
        assert!(matches!(a_rx.try_recv(), Ok(Ok(None))));
        assert!(matches!(b_rx.try_recv(), Ok(Ok(None))));
    }
}
