#!/usr/bin/env python3
"""Every kind of search, one at a time: texts (none, rare and common words, a letter or two typed, two
words, no match) × filters (none, a parent category, a leaf, a stage, a pricing model, a country, a
category with a stage) × orders × both statuses, each requested once untimed and then ROUNDS times
over one keep-alive connection. Prints the reads whose median is over SLOW_MS, slowest first, a
line per text and per filter with its slowest median, and every search whose answer changed from one
request to the next (nothing is written meanwhile: a search that does so pages unreliably).

A benchmark, not a test: it prints figures. It is what a stranger with a script asks (any combination
the API accepts), where wrk's few hot addresses and reads.py's one of each kind show a path only if
someone thought of it. Run it with the read cache off (bench/http.sh's `searches` pass) so every
request reaches the database. Usage: searches.py PORT [ROUNDS] [TSV] (TSV: every search's median and
slowest, one a line, to compare two builds)"""
import json
import statistics
import sys
import time
import urllib.parse

from one_at_a_time import SLOW_MS, Client

port = int(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
tsv = sys.argv[3] if len(sys.argv) > 3 else None
client = Client(port, "searches", timeout=60)
get = client.get


tree = json.loads(get("/api/v1/categories")[1])["items"]
parent = max((c for c in tree if c["subcategories"]), key=lambda c: c.get("listing_count", 0))
leaf = parent["subcategories"][0]["slug"]
parent = parent["slug"]
texts = ["", "workflow", "kanban", "larkhub", "a", "b", "s", "co", "pro", "team p", "workflow export", "qqqzx"]
filters = {
    "none": {},
    "parent": {"category": parent},
    "leaf": {"category": leaf},
    "stage": {"stage": "growing"},
    "pricing": {"pricing_model": "free"},
    "country": {"country": "US"},
    "parent+stage": {"category": parent, "stage": "growing"},
}
sorts = ["relevance", "votes", "newest", "trending", "most_viewed", "most_followed"]
statuses = ["live", "upcoming"]

results = []
varied = []
t0 = time.perf_counter()
for text in texts:
    for fname, f in filters.items():
        for sort in sorts:
            for status in statuses:
                params = dict(f)
                if text:
                    params["q"] = text
                if sort != "relevance":
                    params["sort"] = sort
                if status != "live":
                    params["status"] = status
                path = "/api/v1/listings" + ("?" + urllib.parse.urlencode(params) if params else "")
                status_code, body, times, differed = client.timed(path, rounds)
                assert status_code == 200, (path, status_code, body[:200])
                if differed:
                    varied.append(path)
                results.append((statistics.median(times), max(times), path, text or "(none)", fname))
took = time.perf_counter() - t0
if tsv:
    with open(tsv, "w") as f:
        f.writelines(f"{path}\t{median:.2f}\t{worst:.2f}\n" for median, worst, path, _, _ in results)

slow = sorted((r for r in results if r[0] > SLOW_MS), reverse=True)
print(f"{'search':78s} {'median ms':>10s} {'max ms':>8s}")
for median, worst, path, _, _ in slow:
    print(f"{path:78s} {median:10.2f} {worst:8.2f}")
print()
for label, key in (("text", 3), ("filter", 4)):
    groups = {}
    for r in results:
        groups.setdefault(r[key], []).append(r[0])
    print(f"{label:16s} {'slowest median ms':>18s} {'median of medians':>18s} {'over':>5s}")
    for name, ms in groups.items():
        over = sum(m > SLOW_MS for m in ms)
        print(f"{name:16s} {max(ms):18.2f} {statistics.median(ms):18.2f} {over:5d}")
    print()
for path in varied:
    print(f"answered differently from one request to the next: {path}")
print(f"({len(results)} searches, {rounds} timed requests each, {took:.0f} s; {len(slow)} with a median over "
      f"{SLOW_MS:.0f} ms; slowest {max(r[0] for r in results):.2f} ms; {len(varied)} answered differently "
      f"between requests)")
