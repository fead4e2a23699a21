//! Badge images: SVG rendered by the service for every badge kind, shape, mode and size. Pure text;
//! the REST crate serves it as `image/svg+xml`.

use domain::badge::{BadgeKind, BadgeMode, BadgeShape, BadgeSize};

/// Escapes text for XML and HTML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// Width and height in CSS pixels.
pub fn dimensions(shape: BadgeShape, size: BadgeSize) -> (u32, u32) {
    let (w, h) = match shape {
        BadgeShape::Standard | BadgeShape::Outline | BadgeShape::Pill => (250, 54),
        BadgeShape::Banner => (400, 60),
        BadgeShape::Square => (120, 120),
    };
    let scale = |v: u32| match size {
        BadgeSize::S => v * 4 / 5,
        BadgeSize::M => v,
        BadgeSize::L => v * 5 / 4,
    };
    (scale(w), scale(h))
}

const LIGHT: (&str, &str, &str) = ("#ffffff", "#1a1a2e", "#d0d4dc");
const DARK: (&str, &str, &str) = ("#1a1a2e", "#ffffff", "#3a3f55");
const ACCENT: &str = "#ff6154";

/// The SVG document for one badge of `site_name`.
pub fn render(kind: BadgeKind, shape: BadgeShape, mode: BadgeMode, size: BadgeSize, site_name: &str) -> String {
    let (w, h) = dimensions(shape, size);
    let (vw, vh) = dimensions(shape, BadgeSize::M);
    let radius = match shape {
        BadgeShape::Pill => vh / 2,
        BadgeShape::Square => 16,
        _ => 8,
    };
    let (bg, fg, border) = if mode == BadgeMode::Dark { DARK } else { LIGHT };
    let fill = if shape == BadgeShape::Outline { "none" } else { bg };
    let stroke_width = if shape == BadgeShape::Outline { 2 } else { 1 };
    let stroke = if shape == BadgeShape::Outline { ACCENT } else { border };
    // auto: light colours, switched by the viewer's preference.
    let style = if mode == BadgeMode::Auto {
        format!(
            "<style>.bg{{fill:{fill}}}.fg{{fill:{fg}}}@media (prefers-color-scheme: dark){{.bg{{fill:{}}}.fg{{fill:{}}}}}</style>",
            if shape == BadgeShape::Outline { "none" } else { DARK.0 },
            DARK.1
        )
    } else {
        format!("<style>.bg{{fill:{fill}}}.fg{{fill:{fg}}}</style>")
    };
    let title = escape(&kind.title());
    let name = escape(site_name);
    let label = format!("{} {}", kind.title(), site_name);
    let text = if shape == BadgeShape::Square {
        format!(
            "<circle cx=\"60\" cy=\"38\" r=\"16\" fill=\"{ACCENT}\"/>\
             <text class=\"fg\" x=\"60\" y=\"76\" font-size=\"10\" text-anchor=\"middle\">{title}</text>\
             <text class=\"fg\" x=\"60\" y=\"98\" font-size=\"17\" font-weight=\"700\" text-anchor=\"middle\">{name}</text>"
        )
    } else {
        let x = vh - 6;
        format!(
            "<circle cx=\"{c}\" cy=\"{c}\" r=\"{r}\" fill=\"{ACCENT}\"/>\
             <text class=\"fg\" x=\"{x}\" y=\"{y1}\" font-size=\"10\">{upper}</text>\
             <text class=\"fg\" x=\"{x}\" y=\"{y2}\" font-size=\"20\" font-weight=\"700\">{name}</text>",
            c = vh / 2,
            r = vh / 2 - 12,
            y1 = vh / 2 - 5,
            y2 = vh / 2 + 15,
            upper = title.to_uppercase(),
        )
    };
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {vw} {vh}\" role=\"img\" aria-label=\"{al}\">\
         <title>{al}</title>{style}\
         <rect class=\"bg\" x=\"1\" y=\"1\" width=\"{rw}\" height=\"{rh}\" rx=\"{radius}\" stroke=\"{stroke}\" stroke-width=\"{stroke_width}\"/>\
         <g font-family=\"Helvetica, Arial, sans-serif\">{text}</g></svg>",
        al = escape(&label),
        rw = vw - 2,
        rh = vh - 2,
    )
}

/// A live listing, the badges it may show, and the site's name: what both the badge list and the
/// image route need. 404 for an unknown or not-live slug. With `upcoming`, a listing waiting for its
/// launch (free plan waiting for the badge, or scheduled) is found too, with the "listed on" badge
/// only: the image a maker places on their homepage before the launch.
pub async fn for_listing(
    ctx: &crate::Ctx,
    slug: &domain::slug::Slug,
    upcoming: bool,
) -> crate::OpResult<(domain::listing::Listing, Vec<BadgeKind>, String)> {
    use domain::listing::ListingStatus;
    let store = ctx.app.store.as_ref();
    let l = store
        .get_listing_by_slug(slug)
        .await?
        .filter(|l| {
            l.lifecycle.is_public()
                || (upcoming && matches!(l.lifecycle.status(), ListingStatus::AwaitingBadge | ListingStatus::Scheduled))
        })
        .ok_or(crate::OpError::NotFound("listing"))?;
    let settings = store.all_settings().await?;
    let site =
        domain::settings::SiteSettings::from_pairs(settings.iter().map(|(k, v)| (k.as_str(), v.as_str()))).site_name;
    if !l.lifecycle.is_public() {
        return Ok((l, vec![BadgeKind::ListedOn], site));
    }
    let awards = store.listing_details(l.id, false).await?.awards;
    let kinds = domain::badge::earned(&l, &awards);
    Ok((l, kinds, site))
}

/// The HTML a maker pastes: a link to the listing's page wrapping the badge image.
pub fn embed_html(page: &str, image: &str, alt: &str, (w, h): (u32, u32)) -> String {
    format!(
        "<a href=\"{}\" target=\"_blank\" rel=\"noopener\"><img src=\"{}\" alt=\"{}\" width=\"{w}\" height=\"{h}\"></a>",
        escape(page),
        escape(image),
        escape(alt)
    )
}

/// Where the image of a badge is served.
pub fn image_url(
    public_url: &str,
    slug: &str,
    kind: BadgeKind,
    shape: BadgeShape,
    mode: BadgeMode,
    size: BadgeSize,
) -> String {
    format!(
        "{public_url}/badges/{slug}/{}.svg?shape={}&mode={}&size={}",
        kind.key(),
        shape.as_str(),
        mode.as_str(),
        size.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_style_renders_well_formed_svg() {
        for &shape in BadgeShape::ALL {
            for &mode in BadgeMode::ALL {
                for &size in BadgeSize::ALL {
                    let svg = render(BadgeKind::LaunchOfTheWeek(1), shape, mode, size, "launch<dir>");
                    let (w, h) = dimensions(shape, size);
                    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
                    assert!(svg.contains(&format!("width=\"{w}\" height=\"{h}\"")));
                    assert!(svg.contains("launch&lt;dir&gt;") && !svg.contains("launch<dir>"), "text is escaped");
                    assert_eq!(svg.contains("prefers-color-scheme"), mode == BadgeMode::Auto);
                    assert_eq!(svg.matches('<').count(), svg.matches('>').count());
                }
            }
        }
        assert!(dimensions(BadgeShape::Standard, BadgeSize::L).0 > dimensions(BadgeShape::Standard, BadgeSize::S).0);
    }
}
