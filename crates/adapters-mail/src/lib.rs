//! SMTP delivery of the outbox (lettre: a maintained SMTP client with STARTTLS/TLS, AUTH and proper
//! header encoding, which hand-written SMTP would get wrong). `smtp://host:port` speaks plain SMTP
//! (add `?tls=required` for STARTTLS), `smtps://` implicit TLS; credentials come in the URL.

use async_trait::async_trait;
use domain::ports::{MailSender, OutboxEmail};
use lettre::message::{Mailbox, header::ContentType};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

pub struct SmtpSender {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for SmtpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpSender").field("from", &self.from.to_string()).finish_non_exhaustive()
    }
}

impl SmtpSender {
    /// `url`: `smtp://host:port`, `smtps://user:pass@host`; `from`: `Name <address>`.
    pub fn new(url: &str, from: &str) -> Result<Self, String> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| format!("not a usable SMTP URL: {e}"))?
            .timeout(Some(std::time::Duration::from_secs(20)))
            .build();
        let from = from.parse::<Mailbox>().map_err(|e| format!("not a usable sender address {from:?}: {e}"))?;
        Ok(Self { transport, from })
    }
}

#[async_trait]
impl MailSender for SmtpSender {
    async fn send(&self, email: &OutboxEmail) -> Result<(), String> {
        let to = email.to.parse::<Mailbox>().map_err(|e| format!("bad recipient {}: {e}", email.to))?;
        let msg = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(email.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(email.body.clone())
            .map_err(|e| format!("could not build the message: {e}"))?;
        self.transport.send(msg).await.map(|_| ()).map_err(|e| format!("SMTP delivery failed: {e}"))
    }
}
