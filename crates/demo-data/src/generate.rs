//! The demo-content generator: listings with full profiles and realistic text, founders, votes over
//! many weeks, reviews, updates, milestones, stories, billboard money, domain ratings and revenue.
//! Deterministic for a given seed and "now"; every domain is under the reserved `.example` TLD.

use crate::reference::CategoryFixture;
use crate::rng::Rng;
use chrono::{DateTime, Duration, Utc};
use domain::category::ListingCategories;
use domain::founder::NewFounder;
use domain::ids::{CategoryId, FounderId};
use domain::listing::{
    CountryCode, DomainRating, FoundedYear, Lifecycle, ListingProfile, ListingStatus, NewListing, Plan, Revenue,
    Review, UnlockedSections,
};
use domain::money::Cents;
use domain::ports::ImportListing;
use domain::sections::{ListingUpdate, Milestone, Story};
use domain::slug::Slug;
use domain::social::{Faq, Socials};
use domain::week::LaunchWeek;
use std::collections::{HashMap, HashSet};

const PREFIXES: [&str; 40] = [
    "Nimbus", "Ledger", "Pilot", "Quill", "Orbit", "Harbor", "Beacon", "Cinder", "Delta", "Ember", "Fable", "Glyph",
    "Helix", "Iris", "Juniper", "Kite", "Lumen", "Maple", "Nova", "Onyx", "Pixel", "Quartz", "Rally", "Sprout",
    "Tidal", "Umber", "Vela", "Willow", "Yarrow", "Zephyr", "Atlas", "Bramble", "Cobalt", "Drift", "Echo", "Flint",
    "Grove", "Haven", "Indigo", "Lark",
];
const SUFFIXES: [&str; 20] = [
    "ly", "hub", "flow", "stack", "desk", "base", "kit", "lab", "works", "loop", "forge", "board", "pad", "dash",
    "wise", "cast", "sync", "mint", "nest", "path",
];
const QUALIFIERS: [&str; 20] = [
    "Cloud", "AI", "Pro", "Studio", "HQ", "Labs", "One", "Go", "Plus", "360", "Next", "Prime", "Edge", "Core", "Suite",
    "Now", "Team", "Live", "Sense", "Pilot",
];
const BENEFITS: [&str; 12] = [
    "spend less time on busywork",
    "see everything in one place",
    "stop losing track of the details",
    "make decisions with real numbers",
    "keep the whole team in the loop",
    "ship with confidence",
    "cut the manual steps out of your workflow",
    "answer customers faster",
    "get set up in an afternoon",
    "replace three tools with one",
    "work the way your team already works",
    "grow without hiring for busywork",
];
const PRICING: [(&str, &str); 6] = [
    ("Free", "Free for everyone; paid support available."),
    ("Freemium", "Free plan for up to 3 users; Pro from ${p} per user per month."),
    ("Subscription", "Plans from ${p} per month, billed monthly or yearly."),
    ("One-time purchase", "A one-time licence for ${p}, with a year of updates."),
    ("Usage-based", "Pay as you go from ${p} per 1,000 requests; a free tier every month."),
    ("Open source", "Open source and free to self-host; a hosted plan from ${p} per month."),
];
const STAGES: [&str; 6] = ["idea", "mvp", "beta", "launched", "growing", "profitable"];
const PLACES: [(&str, &[&str]); 20] = [
    ("US", &["San Francisco", "New York", "Austin", "Seattle"]),
    ("GB", &["London", "Manchester", "Edinburgh"]),
    ("DE", &["Berlin", "Munich", "Hamburg"]),
    ("FR", &["Paris", "Lyon"]),
    ("IE", &["Dublin", "Cork", "Galway"]),
    ("NL", &["Amsterdam", "Utrecht"]),
    ("SE", &["Stockholm", "Malmö"]),
    ("ES", &["Barcelona", "Madrid", "Valencia"]),
    ("PT", &["Lisbon", "Porto"]),
    ("CA", &["Toronto", "Vancouver", "Montreal"]),
    ("IN", &["Bengaluru", "Pune"]),
    ("BR", &["São Paulo", "Florianópolis"]),
    ("AU", &["Sydney", "Melbourne"]),
    ("JP", &["Tokyo", "Osaka"]),
    ("SG", &["Singapore"]),
    ("EE", &["Tallinn", "Tartu"]),
    ("PL", &["Warsaw", "Kraków"]),
    ("NG", &["Lagos"]),
    ("KE", &["Nairobi"]),
    ("MX", &["Mexico City", "Guadalajara"]),
];
const FIRST: [&str; 40] = [
    "Ada", "Ben", "Chiara", "Dev", "Elif", "Finn", "Grace", "Hugo", "Ines", "Jonas", "Keiko", "Liam", "Maya", "Nikhil",
    "Olga", "Pablo", "Quinn", "Rosa", "Sami", "Tomás", "Uma", "Viktor", "Wen", "Ximena", "Yusuf", "Zoe", "Aoife",
    "Bruno", "Carmen", "Daniel", "Emeka", "Fatima", "Gustav", "Hana", "Ivan", "Jade", "Kofi", "Lena", "Mateo", "Noor",
];
const LAST: [&str; 40] = [
    "Lindqvist",
    "Okafor",
    "Ferreira",
    "Nakamura",
    "Schmidt",
    "Murphy",
    "Rossi",
    "Kowalski",
    "Garcia",
    "Chen",
    "Patel",
    "Dubois",
    "Novak",
    "Jensen",
    "Silva",
    "Kim",
    "Haddad",
    "Byrne",
    "Tanaka",
    "Müller",
    "Costa",
    "Ivanova",
    "Moreau",
    "O'Brien",
    "Larsen",
    "Santos",
    "Wójcik",
    "Mensah",
    "Kaur",
    "Fischer",
    "Alvarez",
    "Yilmaz",
    "Berg",
    "Nguyen",
    "Romano",
    "Walsh",
    "Singh",
    "Petrov",
    "Ahmed",
    "Keller",
];
const UPDATES: [(&str, &str); 8] = [
    ("Dark mode is here", "You asked, we shipped: every screen now has a dark theme that follows your system setting."),
    ("New integrations", "Connect your existing tools in two clicks. Today we added Slack, Zapier and webhooks."),
    ("Sync is twice as fast", "We rewrote the sync engine. Large workspaces now load in under a second."),
    ("Team plans", "Invite your whole team, share workspaces and manage billing in one place."),
    ("Mobile app beta", "The iOS and Android apps are in public beta. Feedback welcome from the app's help menu."),
    ("Import from spreadsheets", "Bring your data over from CSV or Excel files; we map the columns for you."),
    ("Audit log", "Admins can now see who changed what, and when, for the last 12 months."),
    ("Lower prices for students", "Students and teachers get the Pro plan at half price with a school email."),
];
const MILESTONES: [&str; 6] = [
    "Public beta",
    "First 100 customers",
    "Launched on launchdir",
    "1.0 released",
    "Raised a pre-seed round",
    "Break-even month",
];

/// How much demo content to make, and as of when.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    pub listings: usize,
    pub seed: u64,
    pub now: DateTime<Utc>,
}

impl DemoConfig {
    /// The content `serve --demo-data` loads: 420 listings, of which over 300 are live.
    pub fn standard(now: DateTime<Utc>) -> Self {
        Self { listings: 420, seed: 20_261_122, now }
    }

    /// Founders in the pool: at least 60, about two for every three listings.
    pub fn founder_count(&self) -> usize {
        (self.listings * 2 / 3).max(60)
    }
}

/// One generated listing and what the award computation needs to know about it.
#[derive(Debug)]
pub struct Generated {
    pub item: ImportListing,
    /// The launch week and the votes cast in it, for live listings.
    pub launch_votes: Option<(LaunchWeek, i64)>,
}

#[derive(Debug)]
pub struct Generator {
    cfg: DemoConfig,
    rng: Rng,
    leaves: Vec<CategoryFixture>,
    used_names: HashSet<String>,
    used_slugs: HashSet<String>,
    /// Per slug base, the lowest suffix not yet tried: a million listings share a few thousand name
    /// bases, and probing every suffix from 2 again made generation quadratic.
    next_suffix: HashMap<String, u32>,
    /// Per name base, the next number of its numbered form (`Larkhub 12`), for the same reason.
    next_number: HashMap<String, u64>,
}

impl Generator {
    pub fn new(cfg: DemoConfig, categories: &[CategoryFixture]) -> Self {
        let leaves = categories.iter().filter(|c| c.parent.is_some() && !c.features.is_empty()).cloned().collect();
        Self {
            rng: Rng::new(cfg.seed),
            cfg,
            leaves,
            used_names: HashSet::new(),
            used_slugs: HashSet::new(),
            next_suffix: HashMap::new(),
            next_number: HashMap::new(),
        }
    }

    fn unique_slug(&mut self, base: &str) -> Slug {
        let base = Slug::slugify(base).unwrap_or_else(|| Slug::from_db("item".into()));
        // Slugs are only ever added, so every suffix below the remembered one is still taken: starting
        // there gives the same slug as probing from 2.
        let next = self.next_suffix.entry(base.as_str().to_owned()).or_insert(1);
        let mut n = *next;
        let mut s = if n == 1 { base.clone() } else { base.with_suffix(n) };
        while !self.used_slugs.insert(s.as_str().to_owned()) {
            n += 1;
            s = base.with_suffix(n);
        }
        *next = n + 1;
        s
    }

    fn name(&mut self) -> String {
        // Plain names first, then with a qualifier, then numbered: the numbered form always ends the loop.
        let mut attempt = 0u64;
        loop {
            let base = format!("{}{}", self.rng.pick(&PREFIXES), self.rng.pick(&SUFFIXES));
            let name = match attempt {
                0..=2 => base,
                3..=8 => format!("{base} {}", self.rng.pick(&QUALIFIERS)),
                _ => {
                    // Numbered: this base's next number (numbers appear in no other form of a name).
                    let next = self.next_number.entry(base.clone()).or_insert(attempt);
                    let n = (*next).max(attempt);
                    *next = n + 1;
                    format!("{base} {n}")
                }
            };
            if self.used_names.insert(name.clone()) {
                return name;
            }
            attempt += 1;
        }
    }

    pub fn founders(&mut self) -> Vec<NewFounder> {
        (0..self.cfg.founder_count()).map(|i| self.founder(i)).collect()
    }

    /// Generates founder `i` (call in order, as `founders` does, for the same content).
    pub fn founder(&mut self, i: usize) -> NewFounder {
        let name = format!("{} {}", FIRST[i % FIRST.len()], LAST[(i / FIRST.len() + i * 7) % LAST.len()]);
        let (country, cities) = self.rng.pick(&PLACES);
        let city = self.rng.pick(cities);
        let slug = self.unique_slug(&name);
        let years = self.rng.range(3, 15);
        let bio = format!(
            "{name} spent {years} years building software before starting a company. Based in {city}, they care about \
             tools that respect people's time, and write about product, pricing and the unglamorous parts of running a \
             small business."
        );
        let socials = Socials::parse(
            "socials",
            [
                ("x".to_owned(), format!("https://x.example/{slug}")),
                ("linkedin".to_owned(), format!("https://linkedin.example/in/{slug}")),
            ],
        )
        .unwrap_or_default();
        NewFounder {
            slug,
            name,
            headline: format!("Maker in {city}"),
            bio,
            country: Some((*country).to_owned()),
            avatar_url: String::new(),
            socials,
        }
    }

    /// Generates listing `i`. `categories` maps slugs to stored ids; `founders` are the stored founder ids.
    pub fn listing(&mut self, i: usize, categories: &HashMap<String, CategoryId>, founders: &[FounderId]) -> Generated {
        let now = self.cfg.now;
        let this_week = LaunchWeek::of(now);
        let cat = self.rng.pick(&self.leaves).clone();
        let name = self.name();
        let slug = self.unique_slug(&name);
        let domain = format!("{slug}.example");
        let audience = cat.audience.clone();
        let n_feats = self.rng.range(4, 6) as usize;
        let feats = self.rng.sample(&cat.features, n_feats);
        let benefit = *self.rng.pick(&BENEFITS);
        let benefit2 = *self.rng.pick(&BENEFITS);
        let (country, cities) = *self.rng.pick(&PLACES);
        let city = if self.rng.chance(0.9) { (*self.rng.pick(cities)).to_owned() } else { String::new() };
        let founded = if self.rng.chance(0.75) { FoundedYear::parse(self.rng.range(2012, 2026)).ok() } else { None };
        let (pricing_model, pricing_tpl) = *self.rng.pick(&PRICING);
        let price = self.rng.range(5, 99);
        let pricing_summary =
            if self.rng.chance(0.9) { pricing_tpl.replace("{p}", &price.to_string()) } else { String::new() };
        let cat_lower = cat.name.to_lowercase();

        let tagline = format!("{} for {audience}", capitalise(&cat_lower));
        let short = format!("{name} helps {audience} {benefit}.");
        let mut description = format!(
            "{name} is a {cat_lower} tool for {audience}. It brings {} together so you can {benefit}.\n\n",
            join_and(&feats[..3.min(feats.len())])
        );
        description.push_str(&format!(
            "Teams use {name} to {benefit2}. {} Setup takes minutes and your data stays yours: export it any time.",
            feature_sentence(&feats)
        ));
        if self.rng.chance(0.3) {
            description.push_str(" It fits into the workflow you already have, with an API and webhooks for the rest.");
        }
        if !city.is_empty() {
            description.push_str(&format!("\n\n{name} is built by a small team in {city}."));
        }

        let mut not_found = Vec::new();
        if founded.is_none() {
            not_found.push("founded_year".to_owned());
        }
        if city.is_empty() {
            not_found.push("city".to_owned());
        }
        if pricing_summary.is_empty() {
            not_found.push("pricing_summary".to_owned());
        }

        let mut socials = vec![
            ("website".to_owned(), format!("https://{domain}/")),
            ("x".to_owned(), format!("https://x.example/{slug}")),
        ];
        if cat.slug.contains("api") || self.rng.chance(0.3) {
            socials.push(("github".to_owned(), format!("https://github.example/{slug}")));
        }
        if self.rng.chance(0.5) {
            socials.push(("linkedin".to_owned(), format!("https://linkedin.example/company/{slug}")));
        }

        let faqs = [
            Faq::parse(format!("Who is {name} for?"), format!("{name} is made for {audience}.")),
            Faq::parse(
                "Is there a free plan?".to_owned(),
                match pricing_model {
                    "Free" | "Freemium" | "Open source" => format!("Yes. {pricing_summary}"),
                    _ => "No, but every plan starts with a 14-day trial.".to_owned(),
                },
            ),
            Faq::parse("Can I export my data?".to_owned(), "Yes, as CSV or JSON, at any time.".to_owned()),
        ]
        .into_iter()
        .filter_map(Result::ok)
        .take(self.rng.range(2, 3) as usize)
        .collect();

        let mut profile = ListingProfile::named(name.clone(), format!("https://{domain}/"), domain.clone());
        profile.tagline = tagline.clone();
        profile.short_description = short.clone();
        profile.description = description;
        profile.stage = Slug::parse(*self.rng.pick(&STAGES)).ok();
        profile.pricing_model = pricing_model.to_owned();
        profile.pricing_summary = pricing_summary;
        profile.country = CountryCode::parse(country).ok();
        profile.city = city;
        profile.founded_year = founded;
        profile.contact_email = format!("hello@{domain}");
        profile.demo_video_url =
            if self.rng.chance(0.2) { format!("https://video.example/watch/{slug}") } else { String::new() };
        profile.features = feats.iter().map(|f| capitalise(f)).collect();
        profile.usps = vec![format!("Built for {audience}"), capitalise(benefit)];
        profile.keywords = cat.keywords.iter().cloned().chain(feats.iter().take(2).cloned()).collect();
        profile.tags = vec![cat.slug.clone(), pricing_model.to_lowercase().replace(' ', "-")];
        profile.faqs = faqs;
        profile.socials = Socials::parse("socials", socials).unwrap_or_default();
        profile.headline = tagline;
        profile.summary = short.clone();
        profile.seo_title = format!("{name}: {}", capitalise(&cat_lower));
        profile.seo_description = short;
        profile.not_found_on_website = not_found;

        // Status: most are live, launched over the past 20 weeks; some are scheduled or waiting.
        let roll = self.rng.unit();
        let paid = self.rng.chance(0.35);
        let plan = if paid { Plan::Paid } else { Plan::Free };
        let (lifecycle, launch) = if roll < 0.78 {
            let k = (self.rng.unit().powf(1.5) * 21.0) as i64;
            let week = this_week.plus_weeks(-k);
            let offset = if paid { Duration::hours(self.rng.range(0, 47)) } else { Duration::zero() };
            let at = (week.starts_at() + offset).min(now);
            (Lifecycle::from_parts(ListingStatus::Live, plan, Some(week), Some(at)), Some((week, at)))
        } else if roll < 0.90 {
            let week = this_week.plus_weeks(self.rng.range(1, 8));
            (Lifecycle::from_parts(ListingStatus::Scheduled, plan, Some(week), None), None)
        } else if roll < 0.95 {
            let week = this_week.plus_weeks(self.rng.range(6, 8));
            (Lifecycle::from_parts(ListingStatus::AwaitingBadge, Plan::Free, Some(week), None), None)
        } else {
            (Lifecycle::saved(), None)
        };
        let is_paid = lifecycle.plan() == Plan::Paid;
        let created_at = match launch {
            Some((w, _)) => w.starts_at() - Duration::days(self.rng.range(10, 60)),
            None => now - Duration::days(self.rng.range(1, 40)),
        };

        // Community activity, for live listings only.
        let (mut votes, mut launch_votes, mut follows, mut views) = (Vec::new(), None, 0, 0);
        if let Some((week, at)) = launch {
            let n = (self.rng.unit() * 5.3).exp() as usize;
            let mut in_week = 0;
            for _ in 0..n {
                let window_end = if self.rng.chance(0.7) { week.ends_at().min(now) } else { now };
                let span = (window_end - at).num_seconds().max(1);
                let t = at + Duration::seconds(self.rng.range(0, span - 1));
                if week.contains(t) {
                    in_week += 1;
                }
                votes.push(t);
            }
            launch_votes = Some((week, in_week));
            follows = (n as f64 * (0.2 + self.rng.unit() * 0.5)) as i64;
            views = (n as i64) * self.rng.range(8, 40) + self.rng.range(0, 200);
        }
        let reviews = if launch.is_some() {
            (0..self.rng.range(0, 6))
                .map(|_| {
                    let genuine = self.rng.chance(0.85);
                    let rating = if genuine { self.rng.range(3, 5) } else { self.rng.range(1, 5) } as u8;
                    Review { rating, genuine }
                })
                .collect()
        } else {
            vec![]
        };
        let updates = match launch {
            Some((_, at)) => (0..self.rng.range(0, 3))
                .map(|_| {
                    let (t, b) = *self.rng.pick(&UPDATES);
                    let span = (now - at).num_seconds().max(1);
                    ListingUpdate {
                        title: t.to_owned(),
                        body: b.to_owned(),
                        posted_at: at + Duration::seconds(self.rng.range(0, span - 1)),
                    }
                })
                .collect(),
            None => vec![],
        };
        let unlocked = UnlockedSections {
            story: !is_paid && self.rng.chance(0.1),
            milestones: !is_paid && self.rng.chance(0.1),
            media: false,
        };
        let milestones = (0..self.rng.range(0, 4))
            .filter_map(|m| {
                let date = (created_at - Duration::days(30 * (4 - m))).date_naive().format("%Y-%m-%d").to_string();
                Milestone::parse(&date, MILESTONES[m as usize % MILESTONES.len()].to_owned(), None, None).ok()
            })
            .collect();
        let story = (is_paid || unlocked.story).then(|| story_for(&name, &cat_lower, &audience, benefit)).flatten();
        let billboard = if launch.is_some() && self.rng.chance(0.06) {
            (0..self.rng.range(1, 3))
                .map(|_| (Cents::new(self.rng.range(5, 200) * 100), now - Duration::days(self.rng.range(0, 30))))
                .collect()
        } else {
            vec![]
        };
        let domain_rating = self.rng.chance(0.6).then(|| {
            let value = self.rng.range(5, 85) as u8;
            let prev = (i64::from(value) + self.rng.range(-6, 6)).clamp(0, 100) as u8;
            DomainRating {
                value,
                previous: Some(prev),
                source: "Third-party SEO index".into(),
                measured_on: now.date_naive(),
            }
        });
        let revenue = (launch.is_some() && self.rng.chance(0.25)).then(|| Revenue {
            monthly_cents: self.rng.range(100, 50_000) * 100,
            source: if self.rng.chance(0.6) { "Stripe (verified)".into() } else { "Self-reported".into() },
            as_of: now.date_naive(),
        });

        let extras: Vec<CategoryId> = if is_paid {
            let pool: Vec<&CategoryFixture> = self.leaves.iter().filter(|c| c.slug != cat.slug).collect();
            let k = self.rng.range(0, ListingCategories::MAX_EXTRAS as i64) as usize;
            self.rng.sample(&pool, k).into_iter().filter_map(|c| categories.get(&c.slug).copied()).collect()
        } else {
            vec![]
        };
        let listing_categories =
            categories.get(&cat.slug).and_then(|&primary| ListingCategories::with_extras(primary, extras).ok());
        let mut listing_founders = Vec::new();
        if !founders.is_empty() {
            listing_founders.push((founders[i % founders.len()], "Founder & CEO".to_owned()));
            if self.rng.chance(0.3) {
                let other = founders[(i * 7 + 3) % founders.len()];
                if other != listing_founders[0].0 {
                    listing_founders.push((other, "Co-founder & CTO".to_owned()));
                }
            }
        }
        let featured = launch.is_some() && is_paid && self.rng.chance(0.12);
        let verified = self.rng.chance(0.3);

        Generated {
            item: ImportListing {
                listing: NewListing {
                    slug,
                    profile,
                    lifecycle,
                    categories: listing_categories,
                    unlocked,
                    featured,
                    verified,
                    domain_rating,
                    revenue,
                    created_at,
                },
                founders: listing_founders,
                votes,
                follows,
                views,
                reviews,
                updates,
                milestones,
                story,
                billboard,
            },
            launch_votes,
        }
    }
}

fn story_for(name: &str, cat: &str, audience: &str, benefit: &str) -> Option<Story> {
    Story::parse(
        "story",
        [
            ("title".to_owned(), format!("Why we built {name}")),
            ("why_started".to_owned(), format!("We were {audience} ourselves and every {cat} tool we tried made us work around it.")),
            ("problem".to_owned(), format!("Most {audience} want to {benefit}, but the tools they have were built for someone else.")),
            ("journey".to_owned(), format!("The first version of {name} was a weekend prototype. We showed it to ten people, rewrote it twice, and charged from day one.")),
            ("lessons".to_owned(), "Talk to users every week. Ship small. Say no more often than feels comfortable.".to_owned()),
            ("whats_next".to_owned(), format!("Deeper integrations and a mobile app, so {audience} can use {name} wherever they work.")),
        ],
        Story::MAX_LISTING_TITLE,
    )
    .ok()
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

fn feature_sentence(feats: &[String]) -> String {
    match feats.get(3) {
        Some(f) => format!("{} keeps the details in order.", capitalise(f)),
        None => "Everything is searchable.".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::category_fixtures;
    use chrono::TimeZone;

    fn run(cfg: DemoConfig) -> (Vec<NewFounder>, Vec<Generated>) {
        let fixtures = category_fixtures().unwrap();
        let cats: HashMap<String, CategoryId> =
            fixtures.iter().enumerate().map(|(i, c)| (c.slug.clone(), CategoryId::from_db(i as i64 + 1))).collect();
        let mut g = Generator::new(cfg.clone(), &fixtures);
        let founders = g.founders();
        let ids: Vec<FounderId> = (1..=founders.len() as i64).map(FounderId::from_db).collect();
        let listings = (0..cfg.listings).map(|i| g.listing(i, &cats, &ids)).collect();
        (founders, listings)
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
    }

    #[test]
    fn deterministic_for_a_seed() {
        let cfg = DemoConfig { listings: 40, ..DemoConfig::standard(now()) };
        let (_, a) = run(cfg.clone());
        let (_, b) = run(cfg.clone());
        let key = |g: &Generated| {
            (g.item.listing.slug.clone(), g.item.votes.len(), g.item.listing.profile.description.clone())
        };
        assert_eq!(a.iter().map(key).collect::<Vec<_>>(), b.iter().map(key).collect::<Vec<_>>());
        let (_, c) = run(DemoConfig { seed: 1, ..cfg });
        assert_ne!(a.iter().map(key).collect::<Vec<_>>(), c.iter().map(key).collect::<Vec<_>>());
    }

    #[test]
    fn standard_demo_content_meets_its_promises() {
        let cfg = DemoConfig::standard(now());
        let (founders, listings) = run(cfg);
        let live: Vec<&Generated> =
            listings.iter().filter(|g| g.item.listing.lifecycle.status() == ListingStatus::Live).collect();
        assert!(live.len() >= 300, "{} live listings", live.len());
        assert!(
            listings.iter().any(|g| g.item.listing.lifecycle.status() == ListingStatus::Scheduled),
            "upcoming launches"
        );
        assert!(founders.len() >= 60);
        let mut storied = HashSet::new();
        for g in &listings {
            if g.item.story.is_some() {
                storied.extend(g.item.founders.iter().map(|(f, _)| *f));
            }
        }
        assert!(storied.len() >= 60, "{} founders with stories", storied.len());
        let vote_weeks: HashSet<LaunchWeek> =
            listings.iter().flat_map(|g| g.item.votes.iter().map(|t| LaunchWeek::of(*t))).collect();
        assert!(vote_weeks.len() >= 16, "votes over {} weeks", vote_weeks.len());
        assert!(listings.iter().all(|g| g.item.votes.iter().all(|t| *t <= now())), "no votes from the future");
        assert!(listings.iter().any(|g| !g.item.billboard.is_empty()));
        assert!(listings.iter().any(|g| g.item.listing.revenue.as_ref().is_some_and(|r| !r.source.is_empty())));
        assert!(listings.iter().any(|g| g.item.listing.domain_rating.as_ref().is_some_and(|d| d.previous.is_some())));
        let mut slugs = HashSet::new();
        for g in &listings {
            let p = &g.item.listing.profile;
            assert!(p.domain.ends_with(".example"), "{} must stay under .example", p.domain);
            assert!(p.socials.iter().all(|(_, link)| link.contains(".example/")), "socials stay under .example");
            assert!(slugs.insert(g.item.listing.slug.clone()), "slugs are unique");
            assert!(!p.tagline.is_empty() && p.description.len() > 150 && p.features.len() >= 4);
            // Facts left blank are named, and named facts are blank.
            assert_eq!(p.founded_year.is_none(), p.not_found_on_website.contains(&"founded_year".to_owned()));
            assert_eq!(p.city.is_empty(), p.not_found_on_website.contains(&"city".to_owned()));
        }
    }

    #[test]
    fn a_common_search_word_exists_for_benchmarks() {
        // The search benchmark needs a term in at least 20 % of listings but not in all of them.
        let (_, listings) = run(DemoConfig { listings: 500, ..DemoConfig::standard(now()) });
        let with = listings.iter().filter(|g| g.item.listing.profile.description.contains("workflow")).count();
        assert!(with * 5 >= listings.len() && with * 2 <= listings.len(), "{with} of {}", listings.len());
    }
}
