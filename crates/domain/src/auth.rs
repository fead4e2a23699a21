//! Credentials as values: the API key format with its checksum, the password policy, and who a caller
//! is once signed in. Randomness and hashing are adapters' work (`ports::Secrets`); nothing here does I/O.
//!
//! An API key reads `ldk_` + 32 base62 characters (about 190 bits from 32 random bytes) + a 6-character
//! base62 CRC-32 of those 32. The checksum lets a typo or a truncated copy be refused without a database
//! lookup, and the fixed prefix lets secret scanners recognise a leaked key. The first 12 characters
//! (`ldk_` + 8) are stored in clear to find the key and to show it in lists; the whole key only as a hash.

use crate::ValidationError;
use crate::ids::{ApiKeyId, UserId};
use crate::user::{Email, Scope};
use chrono::{DateTime, Utc};
use std::fmt;

/// Browser sessions one account keeps at once: a sign-in past this ends its oldest session. Each
/// successful sign-in is a session kept for its 30 days, so without a bound one account signing in in
/// a loop grew the store without end; fifty is more browsers than a person uses.
pub const MAX_SESSIONS_PER_ACCOUNT: i64 = 50;

const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A complete API key, as the user holds it. Never stored; `Debug` does not print it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKeyToken(String);

/// Why a string is not an API key (each is a 401 `invalid_token`, told apart only in logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyFormatError {
    #[error("does not start with ldk_")]
    Prefix,
    #[error("has the wrong length")]
    Length,
    #[error("holds a character outside A-Z, a-z, 0-9")]
    Alphabet,
    #[error("checksum does not match (a typo or a truncated key)")]
    Checksum,
}

impl ApiKeyToken {
    pub const PREFIX: &'static str = "ldk_";
    const BODY: usize = 32;
    const CHECK: usize = 6;
    pub const LEN: usize = Self::PREFIX.len() + Self::BODY + Self::CHECK;
    /// Characters kept in clear: the lookup key and what lists show.
    pub const SHOWN: usize = Self::PREFIX.len() + 8;

    /// Builds a key from 32 random bytes (one base62 character each: ~5.95 bits, 190 bits in all).
    pub fn from_random(bytes: &[u8; 32]) -> Self {
        let body: String = bytes.iter().map(|b| char::from(ALPHABET[usize::from(*b) % 62])).collect();
        let check = checksum(&body);
        Self(format!("{}{body}{check}", Self::PREFIX))
    }

    /// Checks prefix, length, alphabet and checksum.
    pub fn parse(raw: &str) -> Result<Self, KeyFormatError> {
        let rest = raw.strip_prefix(Self::PREFIX).ok_or(KeyFormatError::Prefix)?;
        if raw.len() != Self::LEN {
            return Err(KeyFormatError::Length);
        }
        if !rest.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(KeyFormatError::Alphabet);
        }
        let (body, check) = rest.split_at(Self::BODY);
        if checksum(body) != check {
            return Err(KeyFormatError::Checksum);
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part stored in clear (`ldk_` + 8 characters).
    pub fn shown(&self) -> &str {
        &self.0[..Self::SHOWN]
    }
}

impl fmt::Debug for ApiKeyToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKeyToken({}…)", self.shown())
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it) of `s`, as 6 base62 characters.
fn checksum(s: &str) -> String {
    let mut crc = 0xFFFF_FFFFu32;
    for b in s.bytes() {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    let mut n = u64::from(!crc);
    let mut out = [b'0'; ApiKeyToken::CHECK];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(n % 62) as usize];
        n /= 62;
    }
    out.iter().map(|b| char::from(*b)).collect()
}

/// A password a person chose: 8 to 128 characters (NIST SP 800-63B), not only spaces. `Debug` hides it.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    pub const MIN: usize = 8;
    pub const MAX: usize = 128;

    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let n = raw.chars().count();
        if n < Self::MIN {
            return Err(ValidationError::new("password", format!("shorter than {} characters", Self::MIN)));
        }
        if n > Self::MAX {
            return Err(ValidationError::new("password", format!("longer than {} characters", Self::MAX)));
        }
        if raw.trim().is_empty() {
            return Err(ValidationError::new("password", "must not be only spaces"));
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(…)")
    }
}

/// A key's name as its owner typed it: 1 to 100 characters.
pub fn key_name(raw: &str) -> Result<String, ValidationError> {
    let name = raw.trim();
    match name.chars().count() {
        0 => Err(ValidationError::new("name", "must not be empty")),
        n if n > 100 => Err(ValidationError::new("name", "longer than 100 characters")),
        _ => Ok(name.to_owned()),
    }
}

/// How many API keys an account may hold at once (revoked ones do not count): enough for every
/// machine and assistant a person runs, few enough that keys cannot be minted as throwaway identities.
pub const MAX_ACTIVE_API_KEYS: usize = 20;

/// Refuses a new key when the account already holds `active` unrevoked ones.
pub fn room_for_another_key(active: usize) -> Result<(), ValidationError> {
    if active >= MAX_ACTIVE_API_KEYS {
        return Err(no_room_for_another_key());
    }
    Ok(())
}

/// The refusal of a key past [`MAX_ACTIVE_API_KEYS`].
pub fn no_room_for_another_key() -> ValidationError {
    ValidationError::new(
        "keys",
        format!("an account holds at most {MAX_ACTIVE_API_KEYS} active API keys; revoke one first"),
    )
}

/// An API key as stored and listed (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: ApiKeyId,
    pub user_id: UserId,
    pub name: String,
    /// `ldk_` + 8 characters.
    pub shown: String,
    pub scopes: Vec<Scope>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// How a caller signed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    ApiKey(ApiKeyId),
    /// A browser session on the service's own pages.
    Session,
    /// An OAuth access token a client got with the person's consent.
    OAuth,
}

/// A signed-in caller: who, and what the access allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub user_id: UserId,
    pub email: Email,
    pub is_admin: bool,
    pub scopes: Vec<Scope>,
    pub via: Via,
}

impl Principal {
    pub fn allows(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> ApiKeyToken {
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = seed.wrapping_mul(31).wrapping_add(i as u8 * 7);
        }
        ApiKeyToken::from_random(&bytes)
    }

    #[test]
    fn an_account_holds_at_most_twenty_active_keys() {
        assert!(room_for_another_key(MAX_ACTIVE_API_KEYS - 1).is_ok());
        let e = room_for_another_key(MAX_ACTIVE_API_KEYS).unwrap_err();
        assert_eq!(e.field, "keys");
        assert!(e.problem.contains("at most 20"), "{}", e.problem);
    }

    #[test]
    fn keys_round_trip_and_show_only_their_prefix() {
        let k = key(3);
        assert_eq!(k.as_str().len(), ApiKeyToken::LEN);
        assert!(k.as_str().starts_with("ldk_"));
        assert_eq!(ApiKeyToken::parse(k.as_str()).unwrap(), k);
        assert_eq!(k.shown(), &k.as_str()[..12]);
        assert!(!format!("{k:?}").contains(&k.as_str()[12..]), "Debug never prints the secret part");
    }

    #[test]
    fn checksum_is_crc32() {
        // zlib.crc32(b"123456789") == 0xCBF43926, the standard check value.
        let mut crc = 0xFFFF_FFFFu32;
        for b in b"123456789" {
            crc ^= u32::from(*b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        assert_eq!(!crc, 0xCBF4_3926);
        assert_eq!(checksum("123456789").len(), 6);
    }

    #[test]
    fn every_single_character_typo_is_caught_without_a_lookup() {
        let k = key(9);
        let raw = k.as_str();
        for i in ApiKeyToken::PREFIX.len()..raw.len() {
            let mut typo = raw.as_bytes().to_vec();
            typo[i] = if typo[i] == b'a' { b'b' } else { b'a' };
            let typo = String::from_utf8(typo).unwrap();
            assert_eq!(ApiKeyToken::parse(&typo), Err(KeyFormatError::Checksum), "position {i}");
        }
        assert_eq!(ApiKeyToken::parse(&raw[..raw.len() - 1]), Err(KeyFormatError::Length));
        assert_eq!(ApiKeyToken::parse(&raw.replacen("ldk_", "ldx_", 1)), Err(KeyFormatError::Prefix));
        assert_eq!(ApiKeyToken::parse(&format!("{}-{}", &raw[..10], &raw[11..])), Err(KeyFormatError::Alphabet));
        assert_eq!(ApiKeyToken::parse(""), Err(KeyFormatError::Prefix));
    }

    #[test]
    fn passwords_at_their_bounds() {
        assert!(Password::parse(&"a".repeat(7)).is_err());
        assert!(Password::parse(&"a".repeat(8)).is_ok());
        assert!(Password::parse(&"é".repeat(128)).is_ok());
        assert_eq!(Password::parse(&"a".repeat(129)).unwrap_err().field, "password");
        assert!(Password::parse("        ").is_err());
        assert_eq!(format!("{:?}", Password::parse("hunter2hunter2").unwrap()), "Password(…)");
    }

    #[test]
    fn key_names_at_their_bounds() {
        assert_eq!(key_name("  CI  ").unwrap(), "CI");
        assert!(key_name(" ").is_err());
        assert!(key_name(&"n".repeat(100)).is_ok());
        assert!(key_name(&"n".repeat(101)).is_err());
    }
}
