//! VAT numbers checked in VIES, the EU's register, through its REST API
//! (`POST {base}/check-vat-number` with `{"countryCode", "vatNumber"}` → `{"valid": bool}`). An answer
//! that is neither valid nor invalid (a member state's register down, a timeout) is `Unavailable`: the
//! buyer is then charged VAT, never given reverse charge on an unchecked number.

use async_trait::async_trait;
use domain::ports::VatRegistry;
use domain::vat::{VatCheck, VatNumber};
use std::time::Duration;

#[derive(Clone)]
pub struct Vies {
    http: reqwest::Client,
    base: String,
}

impl std::fmt::Debug for Vies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vies").field("base", &self.base).finish_non_exhaustive()
    }
}

impl Vies {
    /// `base` is `https://ec.europa.eu/taxation_customs/vies/rest-api` in production.
    pub fn new(base: &str) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            // A provider's answer is never a reason to go elsewhere: no redirects, and no proxy from
            // the environment (`*_PROXY`) sees the secret key or the payload.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self { http, base: base.trim_end_matches('/').to_owned() })
    }
}

#[async_trait]
impl VatRegistry for Vies {
    async fn check(&self, number: &VatNumber) -> VatCheck {
        let body = serde_json::json!({"countryCode": number.prefix, "vatNumber": number.number});
        let r = match self.http.post(format!("{}/check-vat-number", self.base)).json(&body).send().await {
            Ok(r) => r,
            Err(e) => return VatCheck::Unavailable(format!("VIES could not be reached: {e}")),
        };
        let status = r.status();
        let v: serde_json::Value = match r.json().await {
            Ok(v) => v,
            Err(_) => return VatCheck::Unavailable(format!("VIES answered {status} without JSON")),
        };
        match v["valid"].as_bool() {
            Some(true) if status.is_success() => VatCheck::Valid,
            Some(false) if status.is_success() => VatCheck::Invalid,
            _ => {
                let why = v["errorWrappers"][0]["error"].as_str().unwrap_or("no answer").to_owned();
                VatCheck::Unavailable(format!("VIES: {why}"))
            }
        }
    }
}
