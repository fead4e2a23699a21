//! Orders: the status machine (payment only moves forward) and order numbers.

use crate::ValidationError;
use crate::listing::TransitionError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderStatus {
    Pending,
    Paid,
    /// The person abandoned checkout or it expired before payment.
    Cancelled,
    Refunded,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Paid => "paid",
            Self::Cancelled => "cancelled",
            Self::Refunded => "refunded",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Pending, Self::Paid, Self::Cancelled, Self::Refunded].into_iter().find(|s| s.as_str() == raw)
    }

    fn refuse(self, action: &'static str) -> TransitionError {
        TransitionError { machine: "order", action, current: self.as_str() }
    }

    pub fn pay(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Pending => {
                *self = Self::Paid;
                Ok(())
            }
            _ => Err(self.refuse("mark paid")),
        }
    }

    pub fn cancel(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Pending => {
                *self = Self::Cancelled;
                Ok(())
            }
            _ => Err(self.refuse("cancel")),
        }
    }

    pub fn refund(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Paid => {
                *self = Self::Refunded;
                Ok(())
            }
            _ => Err(self.refuse("refund")),
        }
    }
}

/// An order's public number: `LD-` and 10 characters of Crockford base32 (no I, L, O, U).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OrderNumber(String);

const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

impl OrderNumber {
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let ok = raw.len() == 13 && raw.starts_with("LD-") && raw.bytes().skip(3).all(|b| CROCKFORD.contains(&b));
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(ValidationError::new("number", "is not an order number (LD- and 10 characters)"))
        }
    }

    /// Builds a number from 50 random bits (the caller supplies the randomness).
    pub fn from_random(bits: u64) -> Self {
        let mut s = String::from("LD-");
        for i in (0..10).rev() {
            s.push(CROCKFORD[((bits >> (i * 5)) & 31) as usize] as char);
        }
        Self(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn payment_only_moves_forward() {
        let mut s = OrderStatus::Pending;
        s.pay().unwrap();
        assert_eq!(s.pay().unwrap_err().current, "paid");
        assert!(s.cancel().is_err());
        s.refund().unwrap();
        assert!(s.pay().is_err());
    }

    proptest! {
        #[test]
        fn generated_numbers_parse(bits in any::<u64>()) {
            let n = OrderNumber::from_random(bits);
            prop_assert_eq!(OrderNumber::parse(n.as_str()).unwrap(), n);
        }
    }

    #[test]
    fn bad_numbers() {
        for bad in ["", "LD-", "LD-000000000I", "XX-0000000000", "LD-00000000000"] {
            assert!(OrderNumber::parse(bad).is_err(), "{bad}");
        }
    }
}
