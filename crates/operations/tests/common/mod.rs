//! What the operations tests share: the use cases built as an embedding service would build them — a
//! store (in memory) and an adapter for every other port, each replaceable — without `bootstrap`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use operations::{App, Ports};
use std::sync::Arc;

/// An in-memory store (no database, nothing on disk), with the reference data seeded when `seed`.
pub async fn store(seed: bool) -> Arc<adapters_memory::MemoryStore> {
    let store = Arc::new(adapters_memory::MemoryStore::new());
    if seed {
        demo_data::seed_reference(store.as_ref()).await.unwrap();
    }
    store
}

/// The use cases on `store`, every other port an adapter that needs no network (payments and DNS say
/// they are not configured), changed by `change` (a test puts its mock in).
pub fn app(store: Arc<dyn domain::ports::Store>, change: impl FnOnce(&mut Ports)) -> App {
    let fetcher = adapters_fetch::SafeFetcher::new("launchdir-test", Vec::<String>::new()).unwrap();
    let mut ports = Ports {
        store,
        clock: Arc::new(domain::ports::SystemClock),
        secrets: Arc::new(adapters_auth::OsSecrets::default()),
        reader: Arc::new(adapters_fetch::SiteCrawler::new(fetcher)),
        drafter: Arc::new(adapters_drafter::ExtractiveDrafter),
        dns: Arc::new(adapters_dns::NoResolver("not configured in this test".into())),
        vat: Arc::new(domain::vat::VatTable::new(vec![])),
        vat_registry: None,
        payments: Arc::new(adapters_payments::NotConfigured),
        mailer: None,
        public_url: "http://test".into(),
        allowed_hosts: vec![],
        keys: Arc::new(|| Ok(operations::keys::Keyring::derive(&[7; 32], None))),
    };
    change(&mut ports);
    App::new(ports)
}

/// A new account `email` that owns `listing` through a verified claim (as a maker who proved the
/// domain would), created at `at`.
pub async fn owner_of(
    app: &App,
    store: &dyn domain::ports::Store,
    listing: domain::ids::ListingId,
    email: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> domain::user::User {
    let user = operations::accounts::create_user(app, email, "correct horse 1", "", false).await.unwrap();
    store
        .create_claim(&domain::claim::NewClaim {
            user: user.id,
            listing,
            method: domain::claim::ClaimMethod::Dns,
            email: None,
            token: Some("t".into()),
            token_hash: "h".into(),
            created_at: at,
        })
        .await
        .unwrap();
    let claim = store.my_claims(user.id, Default::default()).await.unwrap().items.remove(0);
    let check = domain::claim::ClaimCheck { at, verified: true, looked_for: "x".into(), found: "x".into() };
    let to = claim.verified(at).unwrap();
    assert!(store.complete_claim(claim.id, claim.status(), to, &check).await.unwrap(), "the owner claimed it");
    user
}

/// A request context for `user` signed in with an API key (listings:write, account:read).
pub fn ctx_as(app: &App, user: &domain::user::User) -> operations::Ctx {
    use domain::auth::{Principal, Via};
    operations::Ctx {
        app: app.clone(),
        public_url: "http://test".into(),
        reads: operations::ReadCache::disabled(),
        caller: operations::Caller::Principal(Principal {
            user_id: user.id,
            email: user.email.clone(),
            is_admin: false,
            scopes: vec![domain::user::Scope::ListingsWrite, domain::user::Scope::AccountRead],
            via: Via::ApiKey(domain::ids::ApiKeyId::from_db(1)),
        }),
        rate_limit_per_minute: 600,
        idempotency_key: None,
        audience: operations::oauth::Audience::Api,
    }
}

/// Calls the operation `id` as REST and MCP do (input as JSON, output as JSON).
pub async fn call(
    ctx: &operations::Ctx,
    id: &str,
    input: serde_json::Value,
) -> Result<serde_json::Value, operations::OpError> {
    let op = operations::registry().into_iter().find(|o| o.id == id).unwrap();
    op.call(ctx.clone(), input).await
}

/// A public client's registration metadata: a name and one redirect URI, nothing else.
pub fn registration(redirect: &str) -> operations::oauth::Registration {
    operations::oauth::Registration {
        redirect_uris: Some(vec![redirect.into()]),
        client_name: Some("Assistant".into()),
        client_uri: None,
        token_endpoint_auth_method: None,
        grant_types: None,
        response_types: None,
        scope: None,
    }
}
