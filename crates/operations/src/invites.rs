//! Co-founder invites seen from the emailed link: finding the invite a token names, and accepting it
//! — only for the invited address, signed in (a mail scanner opening the link changes nothing).

use crate::{App, OpResult};
use domain::auth::Principal;
use domain::draft::{DraftField, FieldValue};
use domain::ports::Invite;

/// An invite and the product it is for (the draft's name, else its address).
#[derive(Debug, Clone)]
pub struct InviteFound {
    pub invite: Invite,
    pub product: String,
}

/// The invite `token` names; `None` for a token no invite has (replaced by a newer invite, or made up).
pub async fn find(app: &App, token: &str) -> OpResult<Option<InviteFound>> {
    let Some(invite) = app.store.invite_by_token(&app.secrets.hash_token(token)).await? else { return Ok(None) };
    let Some(draft) = app.store.get_draft(invite.draft).await? else { return Ok(None) };
    let product = match &draft.profile.field(DraftField::Name).value {
        Some(FieldValue::Text(n)) => n.clone(),
        _ => draft.url.clone(),
    };
    Ok(Some(InviteFound { invite, product }))
}

/// Whether `who` may accept: only the address the invite was sent to.
pub fn is_for(found: &InviteFound, who: &Principal) -> bool {
    who.email.as_str().eq_ignore_ascii_case(&found.invite.email)
}

/// What accepting did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acceptance {
    /// `who` is a co-founder of the draft (and of its listing once saved); accepting twice is fine.
    Accepted,
    /// The invite was sent to another address; nothing changed.
    OtherAddress,
}

/// Accepts the invite for `who` when it was sent to their address.
pub async fn accept(app: &App, who: &Principal, found: &InviteFound) -> OpResult<Acceptance> {
    if !is_for(found, who) {
        return Ok(Acceptance::OtherAddress);
    }
    app.store.accept_invite(found.invite.id, who.user_id, app.now()).await?;
    Ok(Acceptance::Accepted)
}
