//! Images the service passes on (a listing's logo): recognised by their first bytes, never by what a
//! server or a file name claims, and only the formats a browser shows without running anything —
//! PNG, JPEG and WebP (never SVG, which can carry script).

/// The largest logo served, in bytes.
pub const MAX_LOGO_BYTES: usize = 512 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    Png,
    Jpeg,
    Webp,
}

impl ImageKind {
    /// The format `bytes` are in, when it is one of ours.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else {
            None
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
        }
    }
}

/// Why a logo is not served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogoRefusal {
    TooLarge,
    /// Not PNG, JPEG or WebP (SVG, HTML, anything else).
    NotAnImage,
}

/// The kind of a fetched logo, or why it is refused.
pub fn check_logo(bytes: &[u8]) -> Result<ImageKind, LogoRefusal> {
    if bytes.len() > MAX_LOGO_BYTES {
        return Err(LogoRefusal::TooLarge);
    }
    ImageKind::sniff(bytes).ok_or(LogoRefusal::NotAnImage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_png_jpeg_and_webp_by_their_bytes_and_within_the_size() {
        assert_eq!(check_logo(b"\x89PNG\r\n\x1a\n...."), Ok(ImageKind::Png));
        assert_eq!(check_logo(&[0xFF, 0xD8, 0xFF, 0xE0]), Ok(ImageKind::Jpeg));
        assert_eq!(check_logo(b"RIFF\x10\0\0\0WEBPVP8 "), Ok(ImageKind::Webp));
        assert_eq!(
            check_logo(b"<svg xmlns='http://www.w3.org/2000/svg'><script/></svg>"),
            Err(LogoRefusal::NotAnImage)
        );
        assert_eq!(check_logo(b"<html>not a png</html>"), Err(LogoRefusal::NotAnImage));
        let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
        big.resize(MAX_LOGO_BYTES + 1, 0);
        assert_eq!(check_logo(&big), Err(LogoRefusal::TooLarge));
        big.truncate(MAX_LOGO_BYTES);
        assert_eq!(check_logo(&big), Ok(ImageKind::Png), "the edge itself is served");
    }
}
