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

use crate::listings::{ProfileRow, profile_query};
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
    asks: Mutex<Option<mpsc::Sender<Ask>>>,
}

impl ProfileReads {
    pub(crate) fn new(db: DatabaseConnection) -> Self {
        Self { db, asks: Mutex::new(None) }
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
        Ok(read_rows(&self.db, &[slug.as_str()]).await?.into_iter().next())
    }

    /// Where asks go, starting the readers on this runtime when there are none (or none left).
    fn asks(&self) -> Option<mpsc::Sender<Ask>> {
        let mut asks = self.asks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = asks.as_ref().filter(|tx| !tx.is_closed()) {
            return Some(tx.clone());
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        for _ in 0..READERS {
            runtime.spawn(reader(self.db.clone(), Arc::clone(&rx)));
        }
        *asks = Some(tx.clone());
        Some(tx)
    }
}

/// One reader: takes every ask queued (at least one, at most [`MOST_SLUGS`]), reads their listings in
/// one statement and answers each. Ends when the store is gone (every sender dropped).
async fn reader(db: DatabaseConnection, asks: Arc<tokio::sync::Mutex<mpsc::Receiver<Ask>>>) {
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
        let read = read_rows(&db, &slugs).await;
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

/// The profile rows of `slugs`, through the pool.
async fn read_rows(db: &DatabaseConnection, slugs: &[&str]) -> RepoResult<Vec<ProfileRow>> {
    ProfileRow::find_by_statement(profile_query(DbBackend::Postgres, slugs).build()).all(db).await.map_err(repo_err)
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
