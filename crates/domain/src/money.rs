//! Money in integer USD cents. No floating point touches a price.

use std::fmt;
use std::ops::Add;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Cents(i64);

impl Cents {
    pub const ZERO: Self = Self(0);

    pub fn new(c: i64) -> Self {
        Self(c)
    }

    pub fn get(self) -> i64 {
        self.0
    }

    /// `self × rate_basis_points / 10000`, rounded half away from zero: the one rounding rule.
    pub fn percent_bp(self, rate_bp: u32) -> Self {
        let num = i128::from(self.0) * i128::from(rate_bp);
        let q = num / 10_000;
        let r = num % 10_000;
        let rounded = if r.abs() * 2 >= 10_000 { q + num.signum() } else { q };
        Self(rounded as i64)
    }
}

impl Add for Cents {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self(self.0 + o.0)
    }
}

impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        write!(f, "{sign}${}.{:02}", self.0.abs() / 100, self.0.abs() % 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vat_rounding_half_away_from_zero() {
        assert_eq!(Cents::new(4900).percent_bp(1900), Cents::new(931));
        assert_eq!(Cents::new(1).percent_bp(5000), Cents::new(1), "0.5 cent rounds up");
        assert_eq!(Cents::new(-1).percent_bp(5000), Cents::new(-1));
        assert_eq!(Cents::new(12345).to_string(), "$123.45");
    }
}
