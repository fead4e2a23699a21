//! The one validation error every parsing constructor returns: which field, and what is wrong with it.

use std::fmt;

/// A value that failed to parse. `field` is the dotted path a client sent (`fields.name`, `page`);
/// constructors fill in the bare field name and callers prefix it with [`ValidationError::within`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub field: String,
    pub problem: String,
}

impl ValidationError {
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { field: field.into(), problem: problem.into() }
    }

    /// Prefixes the field path: `ValidationError::new("name", ..).within("fields")` names `fields.name`.
    #[must_use]
    pub fn within(mut self, parent: &str) -> Self {
        self.field = if self.field.is_empty() {
            parent.to_owned()
        } else if self.field.starts_with('[') {
            format!("{parent}{}", self.field)
        } else {
            format!("{parent}.{}", self.field)
        };
        self
    }

    /// Renames the field entirely (a constructor shared by several fields reports the caller's name).
    #[must_use]
    pub fn named(mut self, field: &str) -> Self {
        self.field = field.to_owned();
        self
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for ValidationError {}

/// Several validation errors gathered from one request, so a client can fix them all at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl ValidationErrors {
    pub fn push(&mut self, e: ValidationError) {
        self.0.push(e);
    }

    /// Records the error of `r`, if any, and returns its value.
    pub fn take<T>(&mut self, r: Result<T, ValidationError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.0.push(e);
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_result(self) -> Result<(), Self> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl From<ValidationError> for ValidationErrors {
    fn from(e: ValidationError) -> Self {
        Self(vec![e])
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for ValidationErrors {}
