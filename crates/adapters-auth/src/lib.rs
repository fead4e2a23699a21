//! `OsSecrets`: the `Secrets` port on argon2id (passwords), SHA-256 (API keys, which carry 190 random
//! bits, so a fast hash is safe and lets every request check its key cheaply), `subtle` for
//! constant-time comparison, and the operating system's random source.
//!
//! Architecture invariant: the only crate that touches key material; nothing here knows storage or HTTP.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use domain::auth::{ApiKeyToken, Password};
use domain::ports::Secrets;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane), or cheaper ones for tests.
#[derive(Debug, Clone)]
pub struct OsSecrets {
    params: Params,
    /// The decoy hash, made on first use with `params`.
    decoy: std::sync::Arc<std::sync::OnceLock<String>>,
}

impl Default for OsSecrets {
    fn default() -> Self {
        Self::with_params(Params::new(19 * 1024, 2, 1, None).unwrap_or_default())
    }
}

impl OsSecrets {
    /// Minimal argon2 cost, for test suites that create many accounts. Hashes stay valid argon2id and
    /// verify under the default configuration too (the parameters are in the hash).
    pub fn fast_for_tests() -> Self {
        Self::with_params(Params::new(1024, 1, 1, None).unwrap_or_default())
    }

    fn with_params(params: Params) -> Self {
        Self { params, decoy: std::sync::Arc::default() }
    }

    fn argon(&self) -> Argon2<'static> {
        Argon2::new(Algorithm::Argon2id, Version::V0x13, self.params.clone())
    }
}

fn random<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    // The OS random source does not fail on supported platforms; if it ever did, a key made of zeros
    // must not be issued, so this aborts the request (the caller sees a 500) instead.
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut buf).expect("the operating system's random source failed");
    buf
}

/// 32 hex characters always make a valid password (8–128 characters); this is never reached.
fn unreachable_password() -> Password {
    #[allow(clippy::expect_used)]
    Password::parse("a decoy that no one chose").expect("a valid password")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Secrets for OsSecrets {
    fn new_api_key(&self) -> ApiKeyToken {
        ApiKeyToken::from_random(&random::<32>())
    }

    fn hash_password(&self, password: &Password) -> String {
        let salt_bytes = random::<16>();
        let hashed = SaltString::encode_b64(&salt_bytes)
            .and_then(|salt| self.argon().hash_password(password.expose().as_bytes(), &salt).map(|h| h.to_string()));
        #[allow(clippy::expect_used)]
        hashed.expect("argon2id with valid parameters and a 16-byte salt cannot fail")
    }

    fn verify_password(&self, password: &str, hash: &str) -> bool {
        PasswordHash::new(hash).is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
    }

    fn decoy_password_hash(&self) -> String {
        self.decoy
            .get_or_init(|| {
                let random = hex(&random::<16>());
                let p = Password::parse(&random).unwrap_or_else(|_| unreachable_password());
                self.hash_password(&p)
            })
            .clone()
    }

    fn hash_api_key(&self, key: &ApiKeyToken) -> String {
        hex(&Sha256::digest(key.as_str().as_bytes()))
    }

    fn same_hash(&self, a: &str, b: &str) -> bool {
        a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
    }

    fn random_token(&self) -> String {
        hex(&random::<32>())
    }

    fn hash_token(&self, token: &str) -> String {
        hex(&Sha256::digest(token.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let s = OsSecrets::fast_for_tests();
        let p = Password::parse("correct horse battery").unwrap();
        let h = s.hash_password(&p);
        assert!(h.starts_with("$argon2id$v=19$"), "{h}");
        assert!(s.verify_password("correct horse battery", &h));
        assert!(!s.verify_password("correct horse batterY", &h));
        assert!(!s.verify_password("correct horse battery", "not a hash"));
        assert_ne!(h, s.hash_password(&p), "every hash has its own salt");
        assert!(OsSecrets::default().verify_password("correct horse battery", &h), "parameters live in the hash");
    }

    #[test]
    fn the_decoy_hash_costs_what_a_real_one_does_and_matches_nothing() {
        let s = OsSecrets::default();
        let d = s.decoy_password_hash();
        assert!(d.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{d}");
        assert_eq!(d, s.decoy_password_hash(), "made once");
        assert!(!s.verify_password("", &d) && !s.verify_password("correct horse battery", &d));
    }

    #[test]
    fn keys_are_random_parseable_and_hashed() {
        let s = OsSecrets::default();
        let (a, b) = (s.new_api_key(), s.new_api_key());
        assert_ne!(a, b);
        assert_eq!(ApiKeyToken::parse(a.as_str()).unwrap(), a);
        let h = s.hash_api_key(&a);
        assert_eq!(h.len(), 64);
        assert!(!h.contains(a.as_str()));
        assert!(s.same_hash(&h, &s.hash_api_key(&a)));
        assert!(!s.same_hash(&h, &s.hash_api_key(&b)));
        assert!(!s.same_hash(&h, &h[..63]));
        assert_eq!(s.random_token().len(), 64);
        assert_ne!(s.random_token(), s.random_token());
    }
}
