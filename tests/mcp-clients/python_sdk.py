"""The official MCP Python SDK (mcp 2.3) against a running launchdir /mcp: every protocol version the
service supports negotiates, the client lists exactly the operations as tools, and a public tool
answers with structured content. Run by .ci/mcp-clients; prints what it checked, exits 1 on a failure.

Usage: python python_sdk.py http://127.0.0.1:PORT/mcp EXPECTED_TOOL_COUNT
"""

import asyncio
import json
import sys

import httpx
from mcp import Client

URL, EXPECTED = sys.argv[1], int(sys.argv[2])
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


async def main():
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
