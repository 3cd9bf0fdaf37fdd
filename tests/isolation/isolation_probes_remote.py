"""Probes of the remote surfaces (issue 26): the MCP server (in process, and over streamable HTTP with a
bearer key) and the HTTP API of ``serve``, each attacker holding a key of its own scope (tenant, user)
and aimed at the victim's ids. Registered into ``isolation_probes.TEMPLATES`` when the serve extra is
installed.

One uvicorn per world serves both (``create_app``: API, viewer and ``/mcp``); a response with a 5xx
status fails the probe (a bug, not a refusal).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from isolation_probes import S1, Attacker, probe, run_async
from isolation_world import QUERY, SESSIONS, TASK, VICTIM, World

KEYS: dict[tuple[str, str | None], str] = {}  # (tenant, user) -> token
_SERVERS: dict[int, str] = {}
_LOCK = threading.Lock()


def token(a: Attacker) -> str:
    scope = (a.tenant or "default", a.user)
    if scope not in KEYS:
        KEYS[scope] = f"iso-{len(KEYS)}-{a.tenant or 'default'}-{a.user or 'all'}-key"
    return KEYS[scope]


def base_url(w: World) -> str:
    """The world's server (started on first use, kept for the session: a daemon thread)."""
    from layered_memory.serve.api import create_app
    from layered_memory.serve.keys import KeyRing
    from serve_support import running

    from isolation_probes import ATTACKERS, VICTIM_SELF

    with _LOCK:
        if id(w) not in _SERVERS:
            for a in (*ATTACKERS, VICTIM_SELF):
                token(a)
            keys = KeyRing.parse({"keys": [{"key": t, "tenant": tn, **({"user": u} if u else {})} for (tn, u), t in KEYS.items()]})
            ctx = running(create_app(w.mem, keys, run_monitor=False))
            _SERVERS[id(w)] = ctx.__enter__()  # left running: the world's engine outlives every probe
            w.closers.insert(0, lambda: ctx.__exit__(None, None, None))
        return _SERVERS[id(w)]


# == MCP =================================================================================================================
def mcp_calls(w: World, a: Attacker, kind: str) -> list[tuple[str, dict[str, Any]]]:
    as_user = {} if a.user else {"user_id": VICTIM}  # a tenant-wide server names the user; a bound one has no such argument
    if kind == "read":
        return [
            ("qdrant_search_memory", {"query_text": QUERY, "limit": 20}),
            ("qdrant_search_memory", {"query_text": QUERY, "limit": 20, "filters": {"session_key": S1}}),
            ("search", {"query": QUERY, "k": 20, "filters": {"user_id": VICTIM}}),
            ("search", {"queries": ["card PIN", "vault code"], "route": "bm25", "k": 20}),
            ("quick_search", {"query": QUERY, "chat_id": S1, "k": 20}),
            ("topic_search", {"query": QUERY, "k": 20}),
            ("get_context", {"session_id": S1, "query": QUERY, **as_user}),
            ("list_tasks", dict(as_user)),
        ]
    return [
        ("add_message", {"message_id": w.message_ids[S1][1], "chat_id": S1, "content": "overwrite", "user_id": VICTIM}),
        ("add_message", {"message_id": w.message_ids[S1][2], "chat_id": S1, "content": "overwrite", **as_user}),
        ("update_task", {"task_id": TASK, "status": "done", "title": "planted", **as_user}),
        ("complete_task", {"task_id": TASK, **as_user}),
        ("create_task", {"title": "planted", "task_id": TASK, **as_user}),
    ]


def mcp_in_process(h: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp.client import Client

    from layered_memory.serve.mcp_server import build_server, fixed_binding

    async def run() -> list[Any]:
        async with Client(build_server(fixed_binding(h))) as client:
            return [(r.content[0].text, r.structured_content) for r in [await client.call_tool(n, args) for n, args in calls]]

    return run_async(run())


def mcp_over_http(w: World, a: Attacker, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    url = base_url(w) + "/mcp"

    async def run() -> list[Any]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token(a)}"}, timeout=60) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return [(r.content[0].text, r.structured_content) for r in [await client.call_tool(n, args) for n, args in calls]]

    return run_async(run())


@probe("mcp", control=True)
def p_mcp_tools(h, w, a): return mcp_in_process(h, mcp_calls(w, a, "read"))
@probe("mcp", "write")
def p_mcp_writes(h, w, a): return mcp_in_process(h, mcp_calls(w, a, "write"))
@probe("mcp", control=True)
def p_mcp_http_tools(h, w, a): return mcp_over_http(w, a, mcp_calls(w, a, "read"))
@probe("mcp", "write")
def p_mcp_http_writes(h, w, a): return mcp_over_http(w, a, mcp_calls(w, a, "write"))


# == HTTP API ===========================================================================================================
def http(w: World, a: Attacker, requests: list[tuple[str, str, Any]]) -> list[str]:
    import httpx

    out = []
    with httpx.Client(base_url=base_url(w), headers={"Authorization": f"Bearer {token(a)}"}, timeout=60) as client:
        for method, path, body in requests:
            r = client.request(method, path, json=body)
            assert r.status_code < 500, f"{method} {path}: {r.status_code} {r.text[:300]}"
            out.append(f"{method} {path} -> {r.status_code} {r.text}")
    return out


def victim_ids(w: World) -> dict[str, Any]:
    kn = w.mem.knowledge.store
    facts = [e["entity_id"] for e in kn.all_entities() if VICTIM in (e.get("user_ids") or [])]
    return {"topics": w.topic_ids, "facts": facts, "messages": [(s, m) for s in SESSIONS for m in w.message_ids[s][:2]]}


def http_reads(w: World, a: Attacker) -> list[tuple[str, str, Any]]:
    ids = victim_ids(w)
    out: list[tuple[str, str, Any]] = [("GET", "/v1/users", None), ("POST", "/v1/search", {"query": QUERY, "k": 100, "filters": {"user_id": VICTIM}}),
                                       ("POST", "/v1/search", {"queries": ["card PIN", "vault code"], "route": "dense", "k": 100})]
    for user in dict.fromkeys([VICTIM, a.user or VICTIM]):
        u = f"/v1/users/{user}"
        out += [("GET", f"{u}/chats", None), ("GET", f"{u}/facts", None), ("GET", f"{u}/tasks", None), ("GET", f"{u}/agents", None),
                ("GET", f"{u}/search?q={QUERY}&k=100", None), ("GET", f"{u}/quick_search?q={QUERY}&k=100", None),
                ("GET", f"{u}/topic_search?q={QUERY}&k=100", None)]
        for s in SESSIONS:
            out += [("GET", f"{u}/chats/{s}/messages?limit=1000", None), ("GET", f"{u}/chats/{s}/summary", None),
                    ("GET", f"{u}/chats/{s}/topics", None), ("GET", f"{u}/chats/{s}/context?query={QUERY}", None)]
        out += [("GET", f"{u}/topics/{t}", None) for t in ids["topics"]]
        out += [("GET", f"{u}/chats/{s}/messages/{m}", None) for s, m in ids["messages"]]
    return out


def http_writes(w: World, a: Attacker) -> list[tuple[str, str, Any]]:
    ids = victim_ids(w)
    out: list[tuple[str, str, Any]] = [
        ("POST", "/v1/messages", {"message_id": w.message_ids[S1][1], "chat_id": S1, "content": "overwrite", "user_id": VICTIM}),
        ("POST", "/v1/messages", {"message_id": w.message_ids[S1][2], "chat_id": S1, "content": "overwrite"}),
        ("POST", "/v1/agents/check", None),
    ]
    for user in dict.fromkeys([VICTIM, a.user or VICTIM]):
        u = f"/v1/users/{user}"
        out += [("PATCH", f"{u}/tasks/{TASK}", {"status": "done", "title": "planted"}), ("POST", f"{u}/tasks/{TASK}/complete", None),
                ("POST", f"{u}/tasks", {"title": "planted", "task_id": TASK})]
        out += [("DELETE", f"{u}/facts/{f}", None) for f in ids["facts"]]
        out += [("DELETE", f"{u}/chats/{s}/messages/{m}", None) for s, m in ids["messages"]]
    return out


@probe("http", control=True)
def p_http_reads(h, w, a): return http(w, a, http_reads(w, a))
@probe("http", "write")
def p_http_writes(h, w, a): return http(w, a, http_writes(w, a))
@probe("http")
def p_http_viewer_page(h, w, a): return http(w, a, [("GET", "/", None), ("GET", "/openapi.json", None), ("GET", "/v1/me", None)])


def leak_free_summary(results: list[str]) -> str:  # pragma: no cover - a debugging aid
    return json.dumps([r[:200] for r in results], indent=1)
