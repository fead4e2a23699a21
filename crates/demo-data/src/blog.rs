//! The demo blog posts in `fixtures/demo/blog/`: Markdown with a small front matter and a `## FAQ`
//! section whose `### ` headings are questions and whose paragraphs are answers.

use chrono::{NaiveDate, NaiveTime};
use domain::blog::NewBlogPost;
use domain::slug::Slug;
use domain::social::Faq;

/// The posts, compiled in. A test checks that every file in the folder is listed here.
pub const FILES: [(&str, &str); 13] = [
    ("01-how-launch-weeks-work.md", include_str!("../../../fixtures/demo/blog/01-how-launch-weeks-work.md")),
    ("02-free-or-paid-launch.md", include_str!("../../../fixtures/demo/blog/02-free-or-paid-launch.md")),
    ("03-why-we-leave-fields-blank.md", include_str!("../../../fixtures/demo/blog/03-why-we-leave-fields-blank.md")),
    ("04-the-billboard-is-paid.md", include_str!("../../../fixtures/demo/blog/04-the-billboard-is-paid.md")),
    ("05-writing-a-tagline.md", include_str!("../../../fixtures/demo/blog/05-writing-a-tagline.md")),
    ("06-claiming-your-listing.md", include_str!("../../../fixtures/demo/blog/06-claiming-your-listing.md")),
    ("07-badges-that-fit-your-site.md", include_str!("../../../fixtures/demo/blog/07-badges-that-fit-your-site.md")),
    ("08-launch-day-checklist.md", include_str!("../../../fixtures/demo/blog/08-launch-day-checklist.md")),
    ("09-how-search-works.md", include_str!("../../../fixtures/demo/blog/09-how-search-works.md")),
    ("10-trending-explained.md", include_str!("../../../fixtures/demo/blog/10-trending-explained.md")),
    ("11-founder-stories.md", include_str!("../../../fixtures/demo/blog/11-founder-stories.md")),
    ("12-using-the-api-and-mcp.md", include_str!("../../../fixtures/demo/blog/12-using-the-api-and-mcp.md")),
    ("13-reverse-charge-vat.md", include_str!("../../../fixtures/demo/blog/13-reverse-charge-vat.md")),
];

/// Parses one post; the slug is the file name without its number prefix and `.md`.
pub fn parse(file: &str, text: &str) -> Result<NewBlogPost, String> {
    let rest = text.strip_prefix("---\n").ok_or("no front matter")?;
    let (front, body) = rest.split_once("\n---\n").ok_or("front matter not closed")?;
    let field = |k: &str| {
        front
            .lines()
            .find_map(|l| l.strip_prefix(k).and_then(|v| v.strip_prefix(':')).map(|v| v.trim().to_owned()))
            .ok_or(format!("front matter lacks {k}"))
    };
    let (body, faq_text) = match body.split_once("\n## FAQ\n") {
        Some((b, f)) => (b, f),
        None => (body, ""),
    };
    let mut faqs = Vec::new();
    for block in faq_text.split("\n### ").map(str::trim).filter(|b| !b.is_empty()) {
        let block = block.strip_prefix("### ").unwrap_or(block);
        let (q, a) = block.split_once('\n').ok_or("a FAQ question without an answer")?;
        faqs.push(Faq::parse(q.trim().to_owned(), a.trim().to_owned()).map_err(|e| e.to_string())?);
    }
    let stem = file.trim_end_matches(".md");
    let stem = stem.split_once('-').map_or(stem, |(n, s)| if n.chars().all(|c| c.is_ascii_digit()) { s } else { stem });
    let published = NaiveDate::parse_from_str(&field("published")?, "%Y-%m-%d").map_err(|e| e.to_string())?;
    Ok(NewBlogPost {
        slug: Slug::parse(stem).map_err(|e| e.to_string())?,
        title: field("title")?,
        summary: field("summary")?,
        body_markdown: body.trim().to_owned() + "\n",
        author: field("author")?,
        tags: field("tags")?.split(',').map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).collect(),
        faqs,
        published_at: Some(published.and_time(NaiveTime::from_hms_opt(9, 0, 0).unwrap_or_default()).and_utc()),
    })
}

pub fn posts() -> Result<Vec<NewBlogPost>, String> {
    FILES.iter().map(|(f, t)| parse(f, t).map_err(|e| format!("fixtures/demo/blog/{f}: {e}"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_post_parses_with_faqs() {
        let posts = posts().unwrap();
        assert!(posts.len() >= 12);
        for p in &posts {
            assert!(!p.faqs.is_empty(), "{} has FAQs", p.slug);
            assert!(!p.body_markdown.contains("## FAQ"), "FAQs are split off the body");
            assert!(p.body_markdown.len() > 300, "{} has a real body", p.slug);
        }
        assert_eq!(posts[0].slug.as_str(), "how-launch-weeks-work");
    }

    #[test]
    fn every_file_in_the_folder_is_compiled_in() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/demo/blog");
        let mut on_disk: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        on_disk.sort();
        let listed: Vec<String> = FILES.iter().map(|(f, _)| (*f).to_owned()).collect();
        assert_eq!(on_disk, listed);
    }

    #[test]
    fn malformed_posts_are_refused() {
        assert!(parse("x.md", "no front matter").is_err());
        assert!(parse("x.md", "---\ntitle: a\n---\nbody").is_err(), "missing fields");
    }
}
