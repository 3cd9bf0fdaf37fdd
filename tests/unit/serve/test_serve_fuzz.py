"""The bar of issue 26 for ``serve``: 1,000 fuzzed requests (bad JSON, wrong types, huge bodies, unknown
ids, other users' and other tenants' ids, unknown parameters, wrong keys) against every route give a 4xx
with a JSON error or a 2xx, never a 5xx; a refused request changes nothing; and nothing of another user
or tenant comes back.

Our own fuzzer with hypothesis (derandomized: the same 1,000 requests every run), driven by the route
table the OpenAPI document is built from.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("mcp", reason='the serve extra is missing: pip install -e ".[serve]"')

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from layered_memory import LayeredMemory  # noqa: E402
from layered_memory.serve.api import create_app  # noqa: E402
from layered_memory.serve.keys import KeyRing  # noqa: E402
from layered_memory.serve.routes import ROUTES, Route  # noqa: E402
from serve_support import ANNA, BORIS, BORIS_MARK, OTHER, OTHER_MARK, TENANT, open_store, seed  # noqa: E402

REQUESTS = 1000
TOKENS = {"anna": "fuzz-anna-0123456789", "admin": "fuzz-admin-0123456789", "other": "fuzz-other-0123456789"}
KEYS = KeyRing.parse({"keys": [{"key": TOKENS["anna"], "tenant": TENANT, "user": ANNA},
                               {"key": TOKENS["admin"], "tenant": TENANT}, {"key": TOKENS["other"], "tenant": OTHER}]})
FUZZ_ROUTES = [r for r in ROUTES if r.run is not None]  # the event stream stays open: tested on its own


class World:
    """The seeded store, its ids (own, another user's, another tenant's) and a snapshot of what it holds."""

    def __init__(self, mem: LayeredMemory) -> None:
        self.mem = mem
        acme, other = mem.tenant(TENANT), mem.tenant(OTHER)
        self.ids = ["telegram-anna-0", "telegram-anna-4", "web-anna-1", "telegram-boris-0", "t-boarding", "t-earplugs", "coder",
                    "telegram:1", "telegram:2", "web:7", ANNA, BORIS, OTHER, TENANT]
        for tenant in (acme, other):
            for chat in ("telegram:1", "telegram:2", "web:7"):
                self.ids += [t.topic_id for t in tenant.topics.list(chat)]
            facts = tenant.knowledge.list_facts()
            self.ids += [e["entity_id"] for e in facts["entities"]] + [r["relation_id"] for r in facts["relations"]]

    def snapshot(self) -> Any:
        out = []
        for t in (TENANT, OTHER):
            h = self.mem.tenant(t)
            out.append((h.records.count_messages(t), [(x.task_id, x.status, x.title) for u in (ANNA, BORIS) for x in h.list_tasks(u)],
                        sorted(e["entity_id"] + "|".join(e["user_ids"]) for e in h.knowledge.list_facts()["entities"]),
                        len(h.knowledge.list_facts()["relations"])))
        return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    mem = open_store(str(tmp_path_factory.mktemp("fuzz")))
    seed(mem)
    yield World(mem)
    mem.close()


JUNK_TEXT = st.sampled_from(["", " ", "x" * 300, "../../etc/passwd", "a/b", "%00", "\x00", "😀", "日本語", "null", "true", "-1", "0",
                             "1e309", "NaN", "\ud800", "<script>alert(1)</script>", "'; DROP TABLE messages; --", "e-", "r-", "t-"])
JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=40), JUNK_TEXT)
JSON_ANY = st.recursive(JSON_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                        max_leaves=12)


def field_values(name: str, ids: list[str]) -> st.SearchStrategy[Any]:
    specific = {
        "content": st.one_of(st.text(min_size=1, max_size=80), st.sampled_from(["x" * 40_000, "Lisbon again", "\ud800 broken"])),
        "message_id": st.one_of(st.text(alphabet="abcdefgh0123456789-", min_size=1, max_size=12), st.integers(0, 10**6), st.sampled_from(ids)),
        "chat_id": st.sampled_from(["telegram:1", "web:7", "telegram:2", "fuzz:1", "", 5]),
        "user_id": st.sampled_from([ANNA, BORIS, "", None, "someone"]), "title": st.text(max_size=40),
        "queries": st.one_of(st.lists(st.text(max_size=20), max_size=4), st.text(max_size=30), JSON_ANY),
        "role": st.sampled_from(["user", "assistant", "system", "tool", "robot", 1]),
        "route": st.sampled_from(["hybrid", "bm25", "dense", "sideways", None]),
        "status": st.sampled_from(["open", "in_progress", "done", "cancelled", "someday", 3]),
        "k": st.one_of(st.integers(-5, 200), st.text(max_size=5)), "limit": st.one_of(st.integers(-5, 2000), st.text(max_size=5)),
        "create_time": st.sampled_from(["2024-05-02T09:00:00Z", "2024-13-45", "yesterday", 1714640400, -1e20, "2024-05-02T09:00:00"]),
        "due": st.sampled_from(["2024-06-01T17:00:00Z", "next week", "", 17]),
        "filters": st.one_of(st.dictionaries(st.sampled_from(["role", "session_key", "user_id", "tenant", "kind", "chat_id", "timestamp_from", "zz"]),
                                             st.one_of(JSON_SCALAR, st.sampled_from(ids)), max_size=3), JSON_ANY),
        "metadata": JSON_ANY,
    }
    return st.one_of(specific.get(name, st.sampled_from(ids)), JSON_SCALAR, st.sampled_from(ids), st.text(max_size=60))


def pct(text: str) -> str:
    """Percent-encoded UTF-8, lone surrogates included (as raw bytes a client could send)."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


PLAUSIBLE_PATH = {
    "user_id": [ANNA, ANNA, ANNA, BORIS], "chat_id": ["telegram:1", "web:7", "telegram:2"],
    "message_id": ["telegram-anna-0", "telegram-anna-4", "web-anna-1", "telegram-boris-0"], "task_id": ["t-boarding", "t-earplugs"],
}
PLAUSIBLE_QUERY = {
    "q": st.sampled_from(["Lisbon", "hotel Alfama", "payments pod", BORIS_MARK, OTHER_MARK, "Berlin"]), "k": st.integers(-2, 120).map(str),
    "limit": st.integers(-2, 1200).map(str), "chat_id": st.sampled_from(["telegram:1", "web:7", "telegram:2"]),
    "query": st.sampled_from(["hotel", "Lisbon trip"]), "max_tokens": st.integers(-5, 5000).map(str),
    "include_vector": st.sampled_from(["true", "false", "yes", "2"]), "status": st.sampled_from(["open", "done", "someday"]),
    "period_days": st.integers(-1, 5000).map(str),
}


VALID = {  # bodies the server accepts (when the path and key allow): accepted writes between the refused ones
    "add_message": st.fixed_dictionaries({"message_id": st.text(alphabet="abcdef0123456789", min_size=4, max_size=8), "chat_id": st.just("fuzz:1"),
                                          "content": st.text(min_size=1, max_size=60).filter(str.strip)}),
    "create_task": st.fixed_dictionaries({"title": st.text(min_size=1, max_size=30).filter(str.strip)}),
    "update_task": st.fixed_dictionaries({"status": st.sampled_from(["open", "in_progress", "done"])}),
    "search": st.fixed_dictionaries({"query": st.sampled_from(["Lisbon", "payments", "Berlin"]), "k": st.integers(1, 20)}),
}


@st.composite
def requests(draw: Any, ids: list[str]) -> dict[str, Any]:
    rnd = draw(st.randoms(use_true_random=False))  # uniform choices (hypothesis's own draws lean to the first options)
    route: Route = rnd.choice(FUZZ_ROUTES)
    path = route.path
    while "{" in path:
        name = path[path.index("{") + 1: path.index("}")]
        plausible = PLAUSIBLE_PATH.get(name, ids)
        pick = rnd.randrange(10)  # mostly plausible ids (to reach the engine), else anyone's ids and junk
        value = rnd.choice(plausible) if pick < 7 else rnd.choice(ids) if pick < 8 else draw(JUNK_TEXT if pick < 9 else st.text(min_size=1, max_size=20))
        path = path.replace("{" + name + "}", pct(value) or "x", 1)
    known = list(route.query.model_fields) if route.query else []
    if known and rnd.randrange(10) < 7:  # mostly the operation's own parameters, with plausible or bad values
        query = draw(st.fixed_dictionaries({}, optional={n: st.one_of(PLAUSIBLE_QUERY.get(n, st.text(max_size=10)), JUNK_TEXT) for n in known}))
    else:
        query = draw(st.dictionaries(st.sampled_from(known + ["zz", "q", "k", "limit"]), st.one_of(st.text(max_size=30), JUNK_TEXT,
                                                                                                  st.integers(-10, 10**6).map(str)), max_size=4))
    body: bytes | None = None
    if route.body is not None:
        fields = list(route.body.model_fields)
        shape = rnd.choice(["valid", "valid", "fields", "fields", "fields", "json", "bytes", "huge", "deep", "none"])
        if shape == "valid" and route.name in VALID:
            body = json.dumps(draw(VALID[route.name])).encode()
        elif shape in ("fields", "valid"):
            required = {f: field_values(f, ids) for f, info in route.body.model_fields.items() if info.is_required() and rnd.randrange(10) < 8}
            optional = {f: field_values(f, ids) for f in fields + ["extra", "tenant", "seq"] if f not in required}
            obj = draw(st.fixed_dictionaries(required, optional=optional))
            body = json.dumps(obj).encode("utf-8", "surrogatepass")
        elif shape == "json":
            body = json.dumps(draw(JSON_ANY)).encode("utf-8", "surrogatepass")
        elif shape == "bytes":
            body = draw(st.binary(max_size=200))
        elif shape == "huge":
            body = b'{"content": "' + b"x" * 1_100_000 + b'"}'
        elif shape == "deep":
            body = b"[" * 100_000 + b"]" * 100_000
    elif rnd.randrange(10) == 0:
        body = draw(st.binary(max_size=100))  # a body where none is expected: ignored
    key = rnd.choice(["anna", "anna", "anna", "anna", "admin", "admin", "other", "none", "wrong"])
    return {"route": route, "method": route.method, "path": path, "query": query, "body": body, "key": key}


def test_a_thousand_fuzzed_requests_get_4xx_json_or_2xx_never_5xx_and_refusals_write_nothing(world: World) -> None:
    statuses: Counter[int] = Counter()
    problems: list[str] = []
    with TestClient(create_app(world.mem, KEYS, run_monitor=False)) as client:
        state = {"snapshot": world.snapshot()}

        @settings(max_examples=REQUESTS, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(requests(world.ids))
        def one(req: dict[str, Any]) -> None:
            headers = {"content-type": "application/json"}
            if req["key"] in TOKENS:
                headers["Authorization"] = f"Bearer {TOKENS[req['key']]}"
            elif req["key"] == "wrong":
                headers["Authorization"] = "Bearer fuzz-wrong-0123456789"
            qs = "&".join(f"{pct(k)}={pct(v)}" for k, v in req["query"].items())
            r = client.request(req["method"], req["path"] + ("?" + qs if qs else ""), content=req["body"], headers=headers)
            statuses[r.status_code] += 1
            where = f"{req['method']} {req['path']} {req['query']} body={(req['body'] or b'')[:80]!r} key={req['key']}"
            if r.status_code >= 500:
                problems.append(f"{r.status_code} {where}: {r.text[:300]}")
            if r.status_code >= 400:
                try:
                    err = r.json()["error"]
                    assert err["type"] and err["message"]
                except Exception:
                    problems.append(f"not a JSON error: {where}: {r.text[:200]}")
                after = world.snapshot()
                if after != state["snapshot"]:
                    problems.append(f"a refused request changed the store: {where}")
                state["snapshot"] = after
            elif req["method"] != "GET":
                state["snapshot"] = world.snapshot()  # an accepted write: the new state is the reference
            asked = f"{req['path']} {req['query']} {req['body'] or b''}"  # a mark the request itself carries may be echoed
            if req["key"] in ("anna", "admin") and OTHER_MARK in r.text and OTHER_MARK not in asked:
                problems.append(f"another tenant's data: {where}")
            if req["key"] == "anna" and BORIS_MARK in r.text and BORIS_MARK not in asked:
                problems.append(f"another user's data: {where}")

        one()
    print(f"\n{sum(statuses.values())} fuzzed requests by status: {dict(sorted(statuses.items()))}")
    assert sum(statuses.values()) >= REQUESTS
    assert not problems, "\n".join(problems[:20])
    assert all(statuses[c] for c in (200, 201, 400, 401, 403, 404, 413, 422)), statuses  # every outcome was reached  # the fuzzer reached every outcome
