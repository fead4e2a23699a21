//! The deployment's root secret and the keys derived from it.
//!
//! The root secret comes from `LAUNCHDIR_SECRET_KEY`, or from the file `LAUNCHDIR_SECRET_KEY_FILE`
//! names, or — when neither is given — from `launchdir.secret` in the data directory (beside the SQLite
//! file, else the working directory), generated there with mode 0600 on first start. It is never stored
//! in the database. Separate keys are derived from it with HKDF-SHA256, one per purpose, so a key that
//! leaks from one use says nothing about another:
//! - `access-tokens`: signs OAuth access tokens (HS256), named by a `kid` in each token's header;
//! - `address-hash`: keys the hashes of network addresses and emails (vote caps, views, sign-in
//!   counters), so they cannot be reversed by trying every address;
//! - `csrf`: signs the sign-in and sign-up forms' double-submit tokens, so a cookie planted from another
//!   origin (a sibling subdomain) cannot be paired with a field the attacker chose.
//!
//! Rotation: set the old root as `LAUNCHDIR_SECRET_KEY_PREVIOUS` and a new `LAUNCHDIR_SECRET_KEY`;
//! tokens are signed with the new key and those signed with the previous one still verify (by `kid`)
//! until they expire (15 minutes), after which the previous key can be dropped.

use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};

/// The shortest root secret accepted (in bytes of its text).
pub const MIN_SECRET_LEN: usize = 32;
/// The file generated in the data directory when no secret is configured.
pub const SECRET_FILE: &str = "launchdir.secret";

#[derive(Debug, Clone, Default, Args)]
pub struct SecretArgs {
    /// The root secret (at least 32 characters) keys are derived from.
    #[arg(long, env = "LAUNCHDIR_SECRET_KEY", hide_env_values = true)]
    pub secret_key: Option<String>,

    /// A file holding the root secret (its first line); read when LAUNCHDIR_SECRET_KEY is unset.
    #[arg(long, env = "LAUNCHDIR_SECRET_KEY_FILE")]
    pub secret_key_file: Option<PathBuf>,

    /// The root secret before a rotation: tokens it signed still verify until they expire.
    #[arg(long, env = "LAUNCHDIR_SECRET_KEY_PREVIOUS", hide_env_values = true)]
    pub secret_key_previous: Option<String>,
}

impl SecretArgs {
    /// The same settings read from the environment (for commands that take no secret flags).
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Self {
            secret_key: var("LAUNCHDIR_SECRET_KEY"),
            secret_key_file: var("LAUNCHDIR_SECRET_KEY_FILE").map(PathBuf::from),
            secret_key_previous: var("LAUNCHDIR_SECRET_KEY_PREVIOUS"),
        }
    }
}

pub use operations::keys::{Keyring, SigningKey};

/// Where a secret generated on first start is kept: beside the SQLite file, else the working directory.
pub fn data_dir(database_url: &str) -> PathBuf {
    if let Some(rest) = database_url.strip_prefix("sqlite://").or_else(|| database_url.strip_prefix("sqlite:")) {
        let path = rest.split('?').next().unwrap_or_default();
        if !path.is_empty() && path != ":memory:" {
            let parent = Path::new(path).parent().map(Path::to_path_buf).unwrap_or_default();
            return if parent.as_os_str().is_empty() { PathBuf::from(".") } else { parent };
        }
    }
    PathBuf::from(".")
}

fn checked(secret: String, from: &str) -> anyhow::Result<Vec<u8>> {
    let secret = secret.trim().to_owned();
    if secret.len() < MIN_SECRET_LEN {
        anyhow::bail!("{from} must hold at least {MIN_SECRET_LEN} characters (generate one: openssl rand -hex 32)");
    }
    Ok(secret.into_bytes())
}

fn read_file(path: &Path, from: &str) -> anyhow::Result<Vec<u8>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {from} at {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(path)
            && m.permissions().mode() & 0o077 != 0
        {
            tracing::warn!(path = %path.display(), "the secret key file can be read by other users; chmod 600 it");
        }
    }
    checked(text.lines().next().unwrap_or_default().to_owned(), from)
}

/// Writes a new random secret to `path` with mode 0600, unless another process made it first (then
/// that one is read): every start on this data directory uses one secret.
fn generate(path: &Path, random_hex: &str) -> anyhow::Result<Vec<u8>> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut f) => {
            f.write_all(format!("{random_hex}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .with_context(|| format!("cannot write the secret key to {}", path.display()))?;
            tracing::info!(path = %path.display(), "generated the deployment's secret key (keep it; back it up with the database)");
            Ok(random_hex.as_bytes().to_vec())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_file(path, "the secret key file"),
        Err(e) => Err(e).with_context(|| format!("cannot create the secret key file {}", path.display())),
    }
}

/// Loads the keyring as configured; `random_hex` is used only when a secret must be generated.
pub fn load(args: &SecretArgs, data_dir: &Path, random_hex: &str) -> anyhow::Result<Keyring> {
    let root = match (&args.secret_key, &args.secret_key_file) {
        (Some(k), _) => checked(k.clone(), "LAUNCHDIR_SECRET_KEY")?,
        (None, Some(file)) => read_file(file, "LAUNCHDIR_SECRET_KEY_FILE")?,
        (None, None) => {
            let path = data_dir.join(SECRET_FILE);
            if path.exists() { read_file(&path, "the secret key file")? } else { generate(&path, random_hex)? }
        }
    };
    let previous = match &args.secret_key_previous {
        Some(p) => Some(checked(p.clone(), "LAUNCHDIR_SECRET_KEY_PREVIOUS")?),
        None => None,
    };
    Ok(Keyring::derive(&root, previous.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_comes_from_the_setting_a_file_or_a_generated_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let hex = "ab".repeat(32);
        let short = SecretArgs { secret_key: Some("too short".into()), ..SecretArgs::default() };
        assert!(load(&short, dir.path(), &hex).unwrap_err().to_string().contains("LAUNCHDIR_SECRET_KEY"));
        let generated = load(&SecretArgs::default(), dir.path(), &hex).unwrap();
        let file = dir.path().join(SECRET_FILE);
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), hex);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let again = load(&SecretArgs::default(), dir.path(), &"cd".repeat(32)).unwrap();
        assert_eq!(again.access, generated.access, "the generated secret is kept");
        let named = SecretArgs { secret_key_file: Some(file.clone()), ..SecretArgs::default() };
        assert_eq!(load(&named, Path::new("/nonexistent"), &hex).unwrap().access, generated.access);
        let missing = SecretArgs { secret_key_file: Some(dir.path().join("nope")), ..SecretArgs::default() };
        assert!(load(&missing, dir.path(), &hex).unwrap_err().to_string().contains("LAUNCHDIR_SECRET_KEY_FILE"));
    }

    #[test]
    fn the_data_directory_is_beside_the_sqlite_file() {
        assert_eq!(data_dir("sqlite:///var/lib/ld/launchdir.db?mode=rwc"), PathBuf::from("/var/lib/ld"));
        assert_eq!(data_dir("sqlite://launchdir.db?mode=rwc"), PathBuf::from("."));
        assert_eq!(data_dir("postgres://u@h/db"), PathBuf::from("."));
    }
}
