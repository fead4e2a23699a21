"""The official MCP Python SDK (mcp 2.3) against a running launchdir /mcp: every protocol version the
service supports negotiates, the client lists exactly the operations as tools, and a public tool
answers with structured content. Then the SDK's own OAuth client signs in the way a person's assistant
would: the 401 sends it to the metadata, it registers, and a headless browser (this script, with a
cookie jar) signs up on our sign-up page and allows access on our consent page; with the token it
walks submit_listing -> get_draft (polled) -> update_draft -> submit_draft -> quote_order ->
create_checkout -> get_order on a fixture site. Run by .ci/mcp-conformance; prints what it checked,
exits 1 on a failure.

Usage: python python_sdk.py http://127.0.0.1:PORT/mcp EXPECTED_TOOL_COUNT SITE_URL
"""

import asyncio
import json
import re
import sys
import time
import uuid
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

URL, EXPECTED, SITE = sys.argv[1], int(sys.argv[2]), sys.argv[3]
BASE = f"{urlsplit(URL).scheme}://{urlsplit(URL).netloc}"
REDIRECT = "http://127.0.0.1:33333/callback"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


async def sdk(mode):
    async with Client(URL, mode=mode) as client:
        tools = (await client.list_tools()).tools
        check(len(tools) == EXPECTED, f"sdk mode={mode}: protocol {client.protocol_version}, {len(tools)} tools")
        names = {t.name for t in tools}
        check("submit_listing" in names and "create_checkout" in names, f"sdk mode={mode}: tool names are operationIds")
        check(not any("vote" in n for n in names), f"sdk mode={mode}: no tool votes")
        info = await client.call_tool("get_site_info", {})
        check(not info.is_error and info.structured_content["name"] == "launchdir", f"sdk mode={mode}: get_site_info")
        bad = await client.call_tool("search_listings", {"per_page": 101})
        check(bad.is_error, f"sdk mode={mode}: per_page 101 is a tool error a model can read")
        return client.protocol_version


async def initialize(version):
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    async with httpx.AsyncClient() as h:
        r = await h.post(URL, json=body, headers={"accept": "application/json, text/event-stream"})
    text = r.text
    data = next((l[6:] for l in text.splitlines() if l.startswith("data: ")), text)
    return json.loads(data)


class Forms(HTMLParser):
    """Every form on a page: its action and the inputs a browser would send (hidden inputs and the
    button pressed are added by the caller)."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action", ""), "fields": {}, "buttons": []})
        elif tag == "input" and self.forms and a.get("name"):
            self.forms[-1]["fields"][a["name"]] = a.get("value", "")
        elif tag == "button" and self.forms and a.get("name"):
            self.forms[-1]["buttons"].append((a["name"], a.get("value", "")))


def forms(html):
    p = Forms()
    p.feed(html)
    return p.forms


def form_to(html, path):
    """The form that posts to `path` (every page also has the header's search form)."""
    return next(f for f in forms(html) if f["action"].endswith(path))


class Person:
    """A person at a browser, without a browser: follows our redirects with a cookie jar, signs up
    and presses Allow. Hands the code that comes back to the SDK."""

    def __init__(self):
        self.browser = httpx.AsyncClient(base_url=BASE, follow_redirects=False)
        self.email = f"sdk-{uuid.uuid4().hex[:8]}@acme.example"
        self.code = None
        self.consent_page = ""
        self.rounds = 0

    async def go(self, url, hops=6):
        """GET, following our own redirects; returns (last response, where it pointed last)."""
        for _ in range(hops):
            r = await self.browser.get(url)
            loc = r.headers.get("location")
            if r.status_code not in (302, 303) or not loc or loc.startswith(REDIRECT):
                return r, loc
            url = urljoin(str(r.url), loc)
        raise RuntimeError(f"too many redirects at {url}")

    async def redirect_handler(self, authorization_url):
        self.rounds += 1
        r, loc = await self.go(authorization_url)
        if self.rounds == 1:
            check(r.status_code == 200 and "/signin" in str(r.url),
                  "oauth: not signed in, the authorization request leads to our sign-in page")
            page = await self.browser.get("/signup")
            form = form_to(page.text, "/signup")
            form["fields"].update(email=self.email, password="correct horse battery staple")
            r = await self.browser.post(form["action"] or "/signup", data=form["fields"])
            check(r.status_code == 303 and "/signup/sent" in r.headers.get("location", ""),
                  "oauth: signing up says to check the email (the same for any address)")
            page = await self.browser.get("/signin")
            form = form_to(page.text, "/signin")
            form["fields"].update(email=self.email, password="correct horse battery staple")
            r = await self.browser.post(form["action"] or "/signin", data=form["fields"])
            check(r.status_code == 303 and "/oauth/resume/" in r.headers.get("location", ""),
                  "oauth: signing in returns to the authorization request")
            consent, _ = await self.go(urljoin(BASE, r.headers["location"]))
        else:
            # Step-up: a tool needed a scope the first token lacked (403 insufficient_scope); signed in
            # already, the person goes straight to the consent page.
            consent = r
            check("/oauth/authorize" in str(r.url), f"oauth: step-up authorization {self.rounds} goes straight to consent")
        self.consent_page = consent.text
        check(consent.status_code == 200 and "Allow" in consent.text, "oauth: the consent page asks to allow access")
        form = next(f for f in forms(consent.text) if any(v == "allow" for _, v in f["buttons"]))
        data = dict(form["fields"])
        data["decision"] = "allow"
        r = await self.browser.post(urljoin(str(consent.url), form["action"] or "/oauth/authorize"), data=data)
        loc = r.headers.get("location", "")
        check(r.status_code == 303 and loc.startswith(REDIRECT + "?code="), "oauth: Allow redirects with a code")
        q = parse_qs(urlsplit(loc).query)
        self.code = asyncio.get_event_loop().create_future()
        self.code.set_result(AuthorizationCodeResult(code=q["code"][0], state=q.get("state", [None])[0],
                                                     iss=q.get("iss", [None])[0]))

    async def callback_handler(self):
        return await self.code


class Memory:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


async def walk():
    person, store = Person(), Memory()
    provider = OAuthClientProvider(
        server_url=URL,
        client_metadata=OAuthClientMetadata(
            client_name="Python SDK walk", redirect_uris=[REDIRECT], token_endpoint_auth_method="none",
            scope="account:read listings:write orders:write"),
        storage=store,
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
    )
    http = httpx2.AsyncClient(auth=provider, timeout=60)
    async with Client(streamable_http_client(URL, http_client=http), mode="2026-07-28") as client:
        async def call(name, args):
            r = await client.call_tool(name, args)
            check(not r.is_error, f"walk: {name} -> {json.dumps(r.structured_content)[:160]}")
            return r.structured_content or {}

        draft = await call("submit_listing", {"url": SITE})
        check(store.tokens is not None and store.client is not None,
              "oauth: the SDK registered and holds an access token after our 401")
        check("Python SDK walk" in person.consent_page, "oauth: the consent page names the client")
        deadline = time.time() + 60
        while draft.get("status") not in ("ready", "failed") and time.time() < deadline:
            await asyncio.sleep(1)
            draft = await call("get_draft", {"id": draft["id"]})
        check(draft.get("status") == "ready", f"walk: the draft is ready ({draft.get('status')})")
        edited = await call("update_draft", {"id": draft["id"], "fields": {
            "categories": ["Developer Tools"], "tagline": "Rockets for cats, tested by the SDK"}})
        tagline = edited.get("fields", {}).get("tagline", {})
        check(tagline.get("state") in ("edited", "manual") and tagline.get("value") == "Rockets for cats, tested by the SDK",
              f"walk: the edited tagline is the maker's ({tagline.get('state')})")
        saved = await call("submit_draft", {"id": draft["id"]})
        listing = saved.get("listing_id")
        check(isinstance(listing, int), "walk: submit_draft saves a listing")
        items = [{"product": "launch", "listing_id": listing}]
        quote = await call("quote_order", {"items": items, "billing_country": "DE"})
        totals = quote.get("totals", {})
        check(totals.get("vat_cents", 0) > 0 and totals.get("gross_cents") == totals.get("net_cents", 0) + totals["vat_cents"],
              f"walk: a German consumer's quote adds VAT ({totals})")
        order = await call("create_checkout", {"items": items, "billing_country": "DE"})
        check(str(order.get("checkout_url", "")).startswith(BASE + "/checkout/"),
              "walk: create_checkout returns a link to our checkout page for the person")
        got = await call("get_order", {"number": order.get("number", "")})
        check(got.get("status") == "pending", f"walk: the order waits for the person to pay ({got.get('status')})")


async def main():
    await walk()
    modern = await sdk("2026-07-28")
    check(modern == "2026-07-28", "2026-07-28 is used statelessly")
    legacy = await sdk("legacy")
    check(legacy == "2025-11-25", f"legacy handshake negotiates 2025-11-25 (got {legacy})")
    for v in ["2025-03-26", "2025-06-18", "2025-11-25"]:
        got = (await initialize(v)).get("result", {}).get("protocolVersion")
        check(got == v, f"initialize {v} negotiates {got}")
    got = (await initialize("2024-11-05")).get("result", {}).get("protocolVersion")
    check(got != "2024-11-05", f"initialize 2024-11-05 is not accepted (server offers {got})")
    print(f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


asyncio.run(main())
