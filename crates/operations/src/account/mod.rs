//! Operations that need sign-in, starting with the account itself. Each declares its scope; the check
//! runs in `Descriptor::call` before `run`, so `run` can rely on `ctx.principal()`.

use crate::public::NoInput;
use crate::{Ctx, Descriptor, Method, OpError, OpResult, Operation};
use async_trait::async_trait;
use domain::auth::Via;
use domain::user::Scope;
use serde::Serialize;
use utoipa::ToSchema;

pub(crate) fn descriptors() -> Vec<Descriptor> {
    vec![Descriptor::of::<GetAccount>()]
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AccountUser {
    pub id: i64,
    pub email: String,
    pub display_name: String,
    pub created_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AccessKey {
    pub id: i64,
    pub name: String,
    /// The key's first characters (`ldk_` + 8); the rest is never shown again.
    pub prefix: String,
    pub created_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Access {
    /// How this request signed in: `api_key`, `oauth` (an access token a client got with your consent), or `session` on the service's own pages.
    pub via: String,
    /// What the access allows.
    pub scopes: Vec<String>,
    /// The API key used, when `via` is `api_key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<AccessKey>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Limits {
    /// Requests a minute, counted per API key (per client IP for anonymous calls); a burst of the
    /// whole minute's allowance is allowed, then one request every 60/N seconds.
    pub requests_per_minute: u32,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Account {
    pub user: AccountUser,
    pub access: Access,
    pub limits: Limits,
}

#[derive(Debug)]
pub struct GetAccount;

#[async_trait]
impl Operation for GetAccount {
    const ID: &'static str = "get_account";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/me";
    const SCOPE: Option<Scope> = Some(Scope::AccountRead);
    const SUMMARY: &'static str = "Who the caller is and what the access allows";
    const DESCRIPTION: &'static str = "Returns the signed-in account (id, email, display name) and the access this \
        request used: how it signed in (an API key, with its name and prefix), its scopes (account:read, \
        listings:write, orders:write) and its rate limit. Call it first to learn which other operations this credential may use. \
        Read-only; needs account:read.";
    type Input = NoInput;
    type Output = Account;

    async fn run(ctx: &Ctx, _: NoInput) -> OpResult<Account> {
        let p = ctx.principal()?;
        let store = ctx.app.store.as_ref();
        let user = store.get_user(p.user_id).await?.ok_or(OpError::InvalidToken)?;
        let api_key = match p.via {
            Via::ApiKey(id) => store.list_api_keys(p.user_id).await?.into_iter().find(|k| k.id == id).map(|k| {
                AccessKey { id: k.id.get(), name: k.name, prefix: k.shown, created_at: k.created_at.to_rfc3339() }
            }),
            Via::Session | Via::OAuth => None,
        };
        Ok(Account {
            user: AccountUser {
                id: user.id.get(),
                email: user.email.to_string(),
                display_name: user.display_name,
                created_at: user.created_at.to_rfc3339(),
            },
            access: Access {
                via: match p.via {
                    Via::ApiKey(_) => "api_key".into(),
                    Via::Session => "session".into(),
                    Via::OAuth => "oauth".into(),
                },
                scopes: p.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
                api_key,
            },
            limits: Limits { requests_per_minute: ctx.rate_limit_per_minute },
        })
    }
}
