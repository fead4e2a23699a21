//! A listing's logo, served by the service rather than hot-linked: fetched from the address the
//! listing names through the safe site reader (public addresses only, capped), kept only when its
//! bytes are PNG, JPEG or WebP within [`domain::image::MAX_LOGO_BYTES`], and kept in the read cache —
//! a refusal too, so a bad logo is not fetched again on every request.

use crate::cache::ReadCache;
use crate::{App, OpResult};
use domain::image::{ImageKind, check_logo};
use domain::slug::Slug;

/// A logo ready to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logo {
    pub bytes: bytes::Bytes,
    pub content_type: &'static str,
}

const KINDS: [ImageKind; 3] = [ImageKind::Png, ImageKind::Jpeg, ImageKind::Webp];

/// The logo of the live listing `slug`, or `None` when it has none, is not live, or its logo cannot be
/// read or is not an image we serve.
pub async fn logo(app: &App, reads: &ReadCache, slug: &str) -> OpResult<Option<Logo>> {
    let Ok(slug) = Slug::parse(slug.to_owned()) else { return Ok(None) };
    // Keyed by the listing alone: a changed logo address is a public change, which empties the cache,
    // so a cached logo costs no database read at all.
    let key = format!("logo\u{0}{slug}");
    let (store, reader) = (app.store.clone(), app.reader.clone());
    // One byte of kind (0 = none or refused), then the image.
    let packed = reads
        .get_or_bytes(key, async move {
            // An address that is no live listing is not kept (errors never are): nobody fills the cache
            // with made-up slugs.
            let listing = store.get_listing_by_slug(&slug).await?;
            let live = listing.filter(|l| l.lifecycle.status() == domain::listing::ListingStatus::Live);
            let url = live.ok_or(crate::OpError::NotFound("listing"))?.profile.logo_url.trim().to_owned();
            if url.is_empty() {
                return Ok(bytes::Bytes::from_static(&[0]));
            }
            let fetched = reader.read_image(&url).await;
            let kept = fetched.ok().and_then(|b| check_logo(&b).ok().map(|k| (k, b)));
            Ok(match kept {
                Some((kind, b)) => {
                    let tag = KINDS.iter().position(|k| *k == kind).map_or(0, |i| i as u8 + 1);
                    let mut out = Vec::with_capacity(b.len() + 1);
                    out.push(tag);
                    out.extend_from_slice(&b);
                    bytes::Bytes::from(out)
                }
                None => bytes::Bytes::from_static(&[0]),
            })
        })
        .await;
    let packed = match packed {
        Err(crate::OpError::NotFound(_)) => return Ok(None),
        other => other?,
    };
    let kind = packed.first().and_then(|t| KINDS.get(usize::from(*t).checked_sub(1)?));
    Ok(kind.map(|k| Logo { bytes: packed.slice(1..), content_type: k.content_type() }))
}
