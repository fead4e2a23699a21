//! VAT on what a maker buys: which rate applies to an order, from the seller's country (a site
//! setting), the billing country and an optional VAT number. The rates and the number formats are data
//! (`fixtures/reference/eu_vat.json`, loaded into a [`VatTable`]), not code.
//!
//! The rules (digital services sold by a business):
//! - billing country outside the EU: no VAT;
//! - an EU business with a valid VAT number of another member state than the seller's: reverse charge,
//!   0 %, with the note the invoice must carry;
//! - otherwise an EU buyer pays VAT: a consumer at their own country's standard rate (the One-Stop Shop
//!   rule), a business in the seller's own country at that country's standard rate.
//!
//! Money: VAT is computed per line (`Cents::percent_bp`, half away from zero), and totals are sums of
//! the lines, so the lines always add up to the total.

use crate::ValidationError;
use crate::listing::CountryCode;
use crate::money::Cents;

/// One member state: its ISO code, the prefix of its VAT numbers (`EL` for Greece), its standard rate
/// in basis points (1900 = 19 %) and the shape of its numbers after the prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VatCountry {
    pub country: String,
    pub prefix: String,
    pub standard_rate_bp: u32,
    /// `#` a digit, `A` a letter, `X` a letter or digit, anything else itself; `|` separates
    /// alternatives.
    pub pattern: String,
}

/// The member states with their rates and VAT number formats.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VatTable {
    countries: Vec<VatCountry>,
}

fn matches_shape(pattern: &str, s: &str) -> bool {
    pattern.split('|').any(|alt| {
        alt.len() == s.len()
            && alt.bytes().zip(s.bytes()).all(|(p, c)| match p {
                b'#' => c.is_ascii_digit(),
                b'A' => c.is_ascii_uppercase(),
                b'X' => c.is_ascii_uppercase() || c.is_ascii_digit(),
                lit => lit == c,
            })
    })
}

impl VatTable {
    pub fn new(countries: Vec<VatCountry>) -> Self {
        Self { countries }
    }

    pub fn member(&self, country: &str) -> Option<&VatCountry> {
        self.countries.iter().find(|c| c.country == country)
    }

    pub fn is_member(&self, country: &str) -> bool {
        self.member(country).is_some()
    }

    /// A VAT number's length: a two-letter prefix and at least one character, at most 20 in all.
    pub const NUMBER_MIN: usize = 3;
    pub const NUMBER_MAX: usize = 20;

    /// Parses a VAT number offline: spaces, dots and hyphens dropped, case ignored, a member state's
    /// prefix and that state's format.
    pub fn parse_number(&self, raw: &str) -> Result<VatNumber, ValidationError> {
        let clean: String =
            raw.chars().filter(|c| !matches!(c, ' ' | '.' | '-')).collect::<String>().to_ascii_uppercase();
        if clean.len() > Self::NUMBER_MAX {
            return Err(ValidationError::new("vat_number", "longer than 20 characters"));
        }
        let Some(state) = self.countries.iter().find(|c| clean.starts_with(&c.prefix)) else {
            return Err(ValidationError::new(
                "vat_number",
                "must start with an EU member state's prefix (DE, FR, IE, EL for Greece …)",
            ));
        };
        let rest = &clean[state.prefix.len()..];
        if !matches_shape(&state.pattern, rest) {
            return Err(ValidationError::new(
                "vat_number",
                format!(
                    "is not a valid {} VAT number (the format after {} is {})",
                    state.country, state.prefix, state.pattern
                ),
            ));
        }
        Ok(VatNumber { country: state.country.clone(), prefix: state.prefix.clone(), number: rest.to_owned() })
    }
}

/// A VAT number in a valid format: the member state it belongs to and the digits after the prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VatNumber {
    pub country: String,
    pub prefix: String,
    pub number: String,
}

impl VatNumber {
    pub fn full(&self) -> String {
        format!("{}{}", self.prefix, self.number)
    }
}

/// What a registry (VIES) said of a VAT number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VatCheck {
    /// Only the format was checked (no registry configured).
    FormatOnly,
    Valid,
    Invalid,
    /// The registry could not answer; the buyer is charged VAT as a consumer meanwhile.
    Unavailable(String),
}

/// The VAT an order is charged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VatDecision {
    pub rate_bp: u32,
    pub reverse_charge: bool,
    /// Why, in words for the invoice and the person.
    pub note: String,
    /// False until a billing country is known (the checkout page asks for it).
    pub final_rate: bool,
}

/// `1900` → `19 %`, `2550` → `25.5 %`.
pub fn pct(bp: u32) -> String {
    let s = format!("{}.{:02}", bp / 100, bp % 100);
    format!("{} %", s.trim_end_matches('0').trim_end_matches('.'))
}

/// Decides the VAT for a buyer. `number` is a VAT number already parsed and checked (`check`).
pub fn decide(
    table: &VatTable,
    seller: &CountryCode,
    billing: Option<&CountryCode>,
    number: Option<(&VatNumber, &VatCheck)>,
) -> Result<VatDecision, ValidationError> {
    let Some(billing) = billing else {
        return Ok(VatDecision {
            rate_bp: 0,
            reverse_charge: false,
            note:
                "VAT depends on the billing country: it is shown once billing_country is given (the checkout page asks \
                   for it)."
                    .into(),
            final_rate: false,
        });
    };
    let Some(buyer_state) = table.member(billing.as_str()) else {
        if number.is_some() {
            return Err(ValidationError::new("vat_number", "is only for buyers billed in an EU member state"));
        }
        return Ok(VatDecision {
            rate_bp: 0,
            reverse_charge: false,
            note: format!("No VAT: the buyer is billed in {}, outside the EU.", billing.as_str()),
            final_rate: true,
        });
    };
    let seller_state = table.member(seller.as_str());
    let charged = |state: &VatCountry, why: &str| VatDecision {
        rate_bp: state.standard_rate_bp,
        reverse_charge: false,
        note: format!("VAT at {}'s standard rate of {}{why}.", state.country, pct(state.standard_rate_bp)),
        final_rate: true,
    };
    match number {
        Some((n, _)) if n.country != buyer_state.country => Err(ValidationError::new(
            "vat_number",
            format!("is a {} number but billing_country is {}", n.country, buyer_state.country),
        )),
        Some((_, VatCheck::Invalid)) => Err(ValidationError::new("vat_number", "is not registered in VIES")),
        // Reverse charge only with the registry's word: a number in the right format proves nothing
        // about the buyer being a business, and a wrongly removed VAT is the seller's debt.
        Some((n, VatCheck::Valid)) if seller_state.is_none_or(|s| s.country != buyer_state.country) => {
            let checked = " (confirmed in VIES)";
            Ok(VatDecision {
                rate_bp: 0,
                reverse_charge: true,
                note: format!(
                    "Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive \
                     2006/112/EC). Customer VAT number {}{checked}.",
                    n.full()
                ),
                final_rate: true,
            })
        }
        Some((_, VatCheck::FormatOnly)) if seller_state.is_none_or(|s| s.country != buyer_state.country) => {
            Ok(charged(
                buyer_state,
                ": reverse charge needs the VAT number confirmed in VIES, which this service does not check",
            ))
        }
        Some((_, VatCheck::Unavailable(why))) => {
            Ok(charged(buyer_state, &format!(": the VAT number could not be checked ({why}), so VAT is charged")))
        }
        Some(_) => Ok(charged(buyer_state, ", a business in the seller's own country")),
        None => Ok(charged(buyer_state, " (EU consumer)")),
    }
}

/// Net, VAT and gross of one amount at `rate_bp`.
pub fn split(net: Cents, rate_bp: u32) -> (Cents, Cents, Cents) {
    let vat = net.percent_bp(rate_bp);
    (net, vat, net + vat)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> VatTable {
        let c = |country: &str, prefix: &str, bp, pattern: &str| VatCountry {
            country: country.into(),
            prefix: prefix.into(),
            standard_rate_bp: bp,
            pattern: pattern.into(),
        };
        VatTable::new(vec![
            c("DE", "DE", 1900, "#########"),
            c("FR", "FR", 2000, "XX#########"),
            c("IE", "IE", 2300, "#######A|#######AA|#X#####A"),
            c("GR", "EL", 2400, "#########"),
            c("FI", "FI", 2550, "########"),
        ])
    }

    fn cc(s: &str) -> CountryCode {
        CountryCode::parse(s).unwrap()
    }

    #[test]
    fn numbers_are_checked_offline_by_their_states_format() {
        let t = table();
        assert_eq!(t.parse_number("de 123.456-789").unwrap().full(), "DE123456789");
        assert_eq!(t.parse_number("EL123456789").unwrap().country, "GR");
        assert_eq!(t.parse_number("FRAB123456789").unwrap().country, "FR");
        assert!(t.parse_number("IE1234567WA").is_ok() && t.parse_number("IE1234567").is_err());
        for bad in ["DE12345678", "DE1234567890", "XX123", "US123456789", "DEABCDEFGHI", &"1".repeat(21)] {
            assert_eq!(t.parse_number(bad).unwrap_err().field, "vat_number", "{bad}");
        }
    }

    #[test]
    fn consumers_pay_their_countrys_rate_businesses_abroad_reverse_charge() {
        let t = table();
        let ie = cc("IE");
        let us = decide(&t, &ie, Some(&cc("US")), None).unwrap();
        assert_eq!((us.rate_bp, us.reverse_charge, us.final_rate), (0, false, true));
        assert_eq!(decide(&t, &ie, Some(&cc("DE")), None).unwrap().rate_bp, 1900);
        assert_eq!(decide(&t, &ie, Some(&cc("FR")), None).unwrap().rate_bp, 2000);
        let de = t.parse_number("DE123456789").unwrap();
        let rc = decide(&t, &ie, Some(&cc("DE")), Some((&de, &VatCheck::Valid))).unwrap();
        assert!(rc.reverse_charge && rc.rate_bp == 0 && rc.note.contains("DE123456789"), "{rc:?}");
        // A number in the right format, with no registry to confirm it, removes no VAT.
        let unchecked = decide(&t, &ie, Some(&cc("DE")), Some((&de, &VatCheck::FormatOnly))).unwrap();
        assert_eq!((unchecked.rate_bp, unchecked.reverse_charge), (1900, false), "{unchecked:?}");
        assert!(unchecked.note.contains("confirmed in VIES"), "{}", unchecked.note);
        // The seller's own country: VAT, even for a business.
        let irish = t.parse_number("IE1234567WA").unwrap();
        assert_eq!(decide(&t, &ie, Some(&ie), Some((&irish, &VatCheck::Valid))).unwrap().rate_bp, 2300);
        // A number of another state than the billing country, or one VIES refuses: 400 naming it.
        assert_eq!(decide(&t, &ie, Some(&cc("FR")), Some((&de, &VatCheck::Valid))).unwrap_err().field, "vat_number");
        assert!(decide(&t, &ie, Some(&cc("DE")), Some((&de, &VatCheck::Invalid))).is_err());
        let down = decide(&t, &ie, Some(&cc("DE")), Some((&de, &VatCheck::Unavailable("timeout".into())))).unwrap();
        assert_eq!((down.rate_bp, down.reverse_charge), (1900, false));
        assert!(decide(&t, &ie, Some(&cc("US")), Some((&de, &VatCheck::Valid))).is_err());
        let unknown = decide(&t, &ie, None, None).unwrap();
        assert!(!unknown.final_rate && unknown.rate_bp == 0);
        // A seller outside the EU still charges EU consumers; every EU business gets reverse charge.
        assert_eq!(decide(&t, &cc("US"), Some(&cc("DE")), None).unwrap().rate_bp, 1900);
        assert!(decide(&t, &cc("US"), Some(&cc("DE")), Some((&de, &VatCheck::Valid))).unwrap().reverse_charge);
        assert!(decide(&t, &ie, Some(&cc("FI")), None).unwrap().note.contains("25.5 %"));
    }

    #[test]
    fn lines_split_exactly() {
        assert_eq!(split(Cents::new(4900), 1900), (Cents::new(4900), Cents::new(931), Cents::new(5831)));
        assert_eq!(split(Cents::new(4900), 2000), (Cents::new(4900), Cents::new(980), Cents::new(5880)));
        assert_eq!(split(Cents::new(1999), 2550).1, Cents::new(510), "509.745 rounds to 510");
    }
}
