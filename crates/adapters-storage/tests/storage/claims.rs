//! Claims on both databases: stored with their token, found per owner only, one open claim per method,
//! checks recorded, and verification as one compare-and-set that makes the claimant an owner, marks the
//! listing verified and refuses expired or already verified claims.

use crate::accounts::user;
use crate::{listing, now, on_every_store};
use chrono::Duration;
use domain::claim::{ClaimCheck, ClaimMethod, ClaimStatus, NewClaim};
use domain::listing::ListingStatus;

fn new_claim(user: domain::ids::UserId, listing: domain::ids::ListingId, method: ClaimMethod) -> NewClaim {
    NewClaim {
        user,
        listing,
        method,
        email: (method == ClaimMethod::Email).then(|| "admin@acme.example".to_owned()),
        token: (method != ClaimMethod::Email).then(|| format!("tok-{}", method.as_str())),
        token_hash: format!("hash-{}", method.as_str()),
        created_at: now(),
    }
}

fn check(verified: bool, at: chrono::DateTime<chrono::Utc>) -> ClaimCheck {
    ClaimCheck { at, verified, looked_for: "a TXT record".into(), found: "TXT nothing".into() }
}

on_every_store!(claims_are_kept_per_claimant_and_verify_once, |store| {
    let l = store.create_listing(listing("Claimed", ListingStatus::Live, None)).await.unwrap();
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap();
    let bob = store.create_user(user("bob@other.example"), now()).await.unwrap();
    let dns = store.create_claim(&new_claim(ann.id, l.id, ClaimMethod::Dns)).await.unwrap();
    assert_eq!((dns.status(), dns.token.as_deref()), (ClaimStatus::Pending, Some("tok-dns")));
    assert_eq!(dns.expires_at, now() + Duration::days(7));
    let mail = store.create_claim(&new_claim(ann.id, l.id, ClaimMethod::Email)).await.unwrap();
    assert_eq!(store.my_claim(bob.id, dns.id).await.unwrap(), None, "another person's claim is not found");
    assert_eq!(store.my_claim(ann.id, dns.id).await.unwrap().unwrap().id, dns.id);
    let open = store.open_claim(ann.id, l.id, ClaimMethod::Dns, now()).await.unwrap().unwrap();
    assert_eq!(open.id, dns.id);
    let late = now() + Duration::days(7) + Duration::seconds(1);
    assert_eq!(store.open_claim(ann.id, l.id, ClaimMethod::Dns, late).await.unwrap(), None, "expired");
    assert_eq!(store.open_claim(ann.id, l.id, ClaimMethod::Meta, now()).await.unwrap(), None);
    let page = store.my_claims(ann.id, Default::default()).await.unwrap();
    assert_eq!((page.total, page.items[0].id), (2, mail.id), "newest first");
    assert_eq!(store.claim_by_token_hash("hash-email").await.unwrap().unwrap().id, mail.id);
    assert_eq!(store.claim_by_token_hash("hash-dns").await.unwrap(), None, "only email links are looked up");
    assert_eq!(store.email_claims_since(ann.id, l.id, now()).await.unwrap(), 1);

    store.record_claim_check(dns.id, &check(false, now())).await.unwrap();
    assert_eq!(store.my_claim(ann.id, dns.id).await.unwrap().unwrap().last_check, Some(check(false, now())));
    // Whether a claim may verify is the domain's: an expired claim is refused before storage is asked.
    assert!(dns.verified(late).is_err(), "expired claims do not verify");
    assert!(store.owned_listing(ann.id, l.id).await.unwrap().is_none());
    let at = now() + Duration::hours(1);
    let to = dns.verified(at).unwrap();
    assert!(store.complete_claim(dns.id, dns.status(), to, &check(true, at)).await.unwrap());
    assert!(!store.complete_claim(dns.id, dns.status(), to, &check(true, at)).await.unwrap(), "verified once");
    let got = store.my_claim(ann.id, dns.id).await.unwrap().unwrap();
    assert_eq!((got.status(), got.verified_at), (ClaimStatus::Verified, Some(at)));
    assert!(store.owned_listing(ann.id, l.id).await.unwrap().unwrap().verified, "owner, listing verified");
    let to = mail.verified(at).unwrap();
    assert!(
        store.complete_claim(mail.id, mail.status(), to, &check(true, at)).await.unwrap(),
        "an owner may verify again"
    );
    let all = store.claims_on_listing(l.id).await.unwrap();
    assert_eq!(all.iter().map(|c| c.id).collect::<Vec<_>>(), [dns.id, mail.id], "oldest first");
    let owners = store.listing_owners(l.id).await.unwrap();
    assert_eq!(owners.iter().map(|(_, e)| e.as_str()).collect::<Vec<_>>(), ["ann@acme.example"]);
});
