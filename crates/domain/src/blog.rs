//! Blog posts: Markdown text with FAQs, published newest first.

use crate::ids::BlogPostId;
use crate::slug::Slug;
use crate::social::Faq;
use chrono::{DateTime, Utc};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlogPost {
    pub id: BlogPostId,
    pub slug: Slug,
    pub title: String,
    pub summary: String,
    pub body_markdown: String,
    pub author: String,
    pub tags: Vec<String>,
    pub faqs: Vec<Faq>,
    /// `None` for a post not yet published; only published posts are public.
    pub published_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBlogPost {
    pub slug: Slug,
    pub title: String,
    pub summary: String,
    pub body_markdown: String,
    pub author: String,
    pub tags: Vec<String>,
    pub faqs: Vec<Faq>,
    pub published_at: Option<DateTime<Utc>>,
}
