//! The keys the service derives from its deployment's root secret, one per purpose (HKDF-SHA256), so a
//! key that leaks from one use says nothing about another: `access-tokens` signs OAuth access tokens
//! (named by a `kid`), `address-hash` keys the hashes of addresses and emails, `csrf` signs the sign-in
//! and sign-up forms' tokens. Where the root secret comes from is the composition root's business
//! (`bootstrap::keys`); this module only derives and uses the keys.

/// A key that signs access tokens, with the id its tokens carry.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningKey {
    pub kid: String,
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey").field("kid", &self.kid).finish_non_exhaustive()
    }
}

/// Every key the service derives from its root secret.
#[derive(Clone)]
pub struct Keyring {
    pub access: SigningKey,
    /// The access-token key of the previous root secret, for verification only.
    pub access_previous: Option<SigningKey>,
    pub address: Vec<u8>,
    pub csrf: Vec<u8>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("access", &self.access)
            .field("access_previous", &self.access_previous)
            .finish_non_exhaustive()
    }
}

fn derive(root: &[u8], purpose: &str) -> Vec<u8> {
    let hk = hkdf::Hkdf::<sha2::Sha256>::new(Some(b"launchdir key derivation v1"), root);
    let mut out = vec![0u8; 32];
    // 32 bytes is far below HKDF-SHA256's limit of 8160, so this cannot fail.
    let _ = hk.expand(purpose.as_bytes(), &mut out);
    out
}

fn signing_key(root: &[u8]) -> SigningKey {
    use sha2::Digest;
    let bytes = derive(root, "access-tokens");
    let id = sha2::Sha256::digest([b"kid:".as_slice(), &bytes].concat());
    let kid = id.iter().take(8).map(|b| format!("{b:02x}")).collect();
    SigningKey { kid, bytes }
}

impl Keyring {
    pub fn derive(root: &[u8], previous: Option<&[u8]>) -> Self {
        Self {
            access: signing_key(root),
            access_previous: previous.map(signing_key),
            address: derive(root, "address-hash"),
            csrf: derive(root, "csrf"),
        }
    }

    fn csrf_tag(&self, nonce: &str) -> String {
        use hmac::{Mac, digest::KeyInit};
        let Ok(mut mac) = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&self.csrf) else {
            return String::new();
        };
        mac.update(nonce.as_bytes());
        mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A form token: `nonce.tag`, the tag an HMAC of the nonce under the CSRF key.
    pub fn form_token(&self, nonce: &str) -> String {
        format!("{nonce}.{}", self.csrf_tag(nonce))
    }

    /// Whether `token` is one [`Keyring::form_token`] made (compared in constant time).
    pub fn form_token_ok(&self, token: &str) -> bool {
        use subtle::ConstantTimeEq;
        let Some((nonce, tag)) = token.split_once('.') else { return false };
        let want = self.csrf_tag(nonce);
        !nonce.is_empty() && want.len() == tag.len() && bool::from(want.as_bytes().ct_eq(tag.as_bytes()))
    }

    /// The key a token whose header names `kid` was signed with (none named: the current one).
    pub fn verifying(&self, kid: Option<&str>) -> Option<&SigningKey> {
        match kid {
            None => Some(&self.access),
            Some(k) if k == self.access.kid => Some(&self.access),
            Some(k) => self.access_previous.as_ref().filter(|p| p.kid == k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_derived_per_purpose_and_named_by_kid() {
        let a = Keyring::derive(&[7; 40], None);
        let again = Keyring::derive(&[7; 40], None);
        assert_eq!(a.access, again.access, "deterministic");
        assert_ne!(a.access.bytes, a.address, "one key per purpose");
        assert_eq!(a.access.kid.len(), 16);
        let rotated = Keyring::derive(&[8; 40], Some(&[7; 40]));
        assert_ne!(rotated.access.kid, a.access.kid);
        assert_eq!(rotated.verifying(Some(&a.access.kid)), Some(&a.access), "the previous key still verifies");
        assert_eq!(rotated.verifying(Some(&rotated.access.kid)), Some(&rotated.access));
        assert_eq!(rotated.verifying(Some("0000000000000000")), None);
        assert_eq!(a.verifying(Some(&rotated.access.kid)), None, "a key the service never had");
        assert_ne!(a.csrf, a.address);
        let t = a.form_token("abc123");
        assert!(a.form_token_ok(&t));
        assert!(!rotated.form_token_ok(&t), "another deployment's token");
        assert!(!a.form_token_ok("abc123.00") && !a.form_token_ok("abc123") && !a.form_token_ok(&format!("x{t}")));
    }
}
