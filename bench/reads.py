#!/usr/bin/env python3
"""Every public read once at a time: each operation of the read API and each page of the site,
requested over one keep-alive connection, once untimed and then ROUNDS times, printing the median and
the slowest in ms and flagging a median over SLOW_MS.

A benchmark, not a test: it prints figures. It is what wrk's handful of hot addresses do not show: a
read whose statement walks far more rows than it returns (a plan that changed under an index, say)
costs the same at one connection as at 64, and shows here as one line far above its neighbours. Run it
with the read cache off (bench/http.sh's `reads` pass) so every request reaches the database.

The addresses come from the directory itself (a listing pair, a parent category and a leaf, a founder,
a blog post), so any database with demo data works. Usage: reads.py PORT [ROUNDS]"""
import json
import statistics
import sys

from one_at_a_time import SLOW_MS, Client

port = int(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
client = Client(port, "reads", timeout=30)
get = client.get


def first(path, key="slug"):
    status, body = get(path)
    assert status == 200, (path, status)
    items = json.loads(body)["items"]
    assert items, f"{path} lists nothing: load demo data first"
    return [i[key] for i in items]


a, b = first("/api/v1/listings?per_page=2")
tree = json.loads(get("/api/v1/categories")[1])["items"]
parent = next(c for c in tree if c["subcategories"])
leaf = parent["subcategories"][0]["slug"]
parent = parent["slug"]
founder = first("/api/v1/founders?per_page=1")[0]
post = first("/api/v1/blog?per_page=1")[0]
api = [
    "/api/v1/site",
    "/api/v1/listings",
    "/api/v1/listings?sort=newest",
    "/api/v1/listings?sort=trending",
    f"/api/v1/listings?category={parent}",
    f"/api/v1/listings?category={leaf}",
    "/api/v1/listings?stage=growing",
    "/api/v1/listings?pricing_model=free",
    "/api/v1/listings?q=workflow",
    "/api/v1/listings?q=invoices",
    f"/api/v1/listings?q=workflow&category={leaf}",
    f"/api/v1/listings/{a}",
    f"/api/v1/listings/{a}/alternatives",
    f"/api/v1/listings/{a}/badges",
    f"/api/v1/compare?a={a}&b={b}",
    "/api/v1/categories",
    f"/api/v1/categories/{parent}",
    f"/api/v1/categories/{leaf}",
    "/api/v1/launches",
    "/api/v1/launches?section=today",
    "/api/v1/launches?section=trending",
    "/api/v1/launches?section=upcoming",
    "/api/v1/launches/weeks/this",
    "/api/v1/launches/weeks/last",
    "/api/v1/leaderboards/community-weekly",
    "/api/v1/leaderboards/community-all-time",
    "/api/v1/leaderboards/billboard",
    "/api/v1/leaderboards/domain-rating",
    "/api/v1/leaderboards/revenue",
    "/api/v1/founders",
    f"/api/v1/founders/{founder}",
    "/api/v1/blog",
    f"/api/v1/blog/{post}",
    "/api/v1/awards",
    "/api/v1/interview-questions",
    "/api/v1/products",
]
site = [
    "/",
    f"/listings/{a}",
    "/categories",
    f"/categories/{parent}",
    f"/categories/{leaf}",
    "/launches/this",
    "/launches/last",
    f"/founders/{founder}",
    "/blog",
    f"/blog/{post}",
    "/awards",
    f"/compare?a={a}&b={b}",
    "/search?q=workflow",
    f"/search?q=workflow&category={leaf}",
    "/leaderboards/community-weekly",
    "/leaderboards/domain-rating",
    "/sitemap.xml",
    "/feeds/launches.atom",
]
print(f"{'read':58s} {'status':>6s} {'median ms':>10s} {'max ms':>8s} {'bytes':>8s}")
slow = 0
for path in api + site:
    status, body, times, _ = client.timed(path, rounds)
    median = statistics.median(times)
    flag = " slow" if median > SLOW_MS else ""
    slow += bool(flag)
    print(f"{path:58s} {status:>6d} {median:10.2f} {max(times):8.2f} {len(body):8d}{flag}")
print(f"({len(api) + len(site)} reads, {rounds} timed requests each; {slow} with a median over {SLOW_MS:.0f} ms)")
