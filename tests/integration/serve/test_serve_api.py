"""``layered-memory serve``: the HTTP API over a seeded store (in process through Starlette's TestClient,
and a real uvicorn for the event stream and the multi-worker run).

What is checked: keys -> scope (401, 403, nothing of another user or tenant), the viewer's reads against
the engine's own answers, the fact delete cascade, 4xx JSON errors from the library's error tree with
nothing written, the OpenAPI document, and the agent monitor's Server-Sent Events.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

pytest.importorskip("mcp", reason='the serve extra is missing: pip install -e ".[serve]"')

import httpx  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from layered_memory import LayeredMemory  # noqa: E402
from layered_memory.serve.api import create_app  # noqa: E402
from layered_memory.serve.keys import KeyRing, add_key  # noqa: E402
from layered_memory.serve.routes import ROUTES  # noqa: E402
from serve_support import (  # noqa: E402
    ANNA, BORIS, BORIS_MARK, OTHER, OTHER_MARK, TENANT, free_port, group_chat_store, open_store, running, seed,
)

TOKENS = {"anna": "anna-key-0123456789abc", "boris": "boris-key-0123456789abc", "admin": "acme-admin-0123456789abc",
          "other": "other-admin-0123456789abc"}
KEYS = {"keys": [
    {"name": "anna", "key": TOKENS["anna"], "tenant": TENANT, "user": ANNA},
    {"name": "boris", "key": TOKENS["boris"], "tenant": TENANT, "user": BORIS},
    {"name": "admin", "key": TOKENS["admin"], "tenant": TENANT},
    {"name": "other", "key": TOKENS["other"], "tenant": OTHER},
]}


def auth(who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[who]}"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    mem = open_store(str(tmp_path_factory.mktemp("serve")))
    seed(mem)
    yield mem
    mem.close()


@pytest.fixture(scope="module")
def client(store: LayeredMemory) -> Any:
    with TestClient(create_app(store, KeyRing.parse(KEYS), run_monitor=False)) as c:
        yield c


def test_the_openapi_document_describes_every_route_and_validates(client: TestClient) -> None:
    import jsonschema

    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    ops = {(m.upper(), p) for p, item in doc["paths"].items() for m in item}
    assert ops == {(r.method, r.path) for r in ROUTES}
    for name, schema in doc["components"]["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(schema)
    body = doc["paths"]["/v1/messages"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/MessageIn"}
    assert set(doc["components"]["schemas"]["MessageIn"]["required"]) == {"message_id", "chat_id", "content"}
    k = next(p for p in doc["paths"]["/v1/users/{user_id}/search"]["get"]["parameters"] if p["name"] == "k")
    assert k["schema"]["maximum"] == 100 and not k["required"]


def test_a_request_without_a_known_key_gets_401_and_public_pages_need_none(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer nope-nope-nope-nope"}, {"Authorization": f"Basic {TOKENS['anna']}"}):
        r = client.get("/v1/users", headers=headers)
        assert r.status_code == 401 and r.json()["error"]["type"] == "Unauthorized"
        assert r.headers["www-authenticate"].startswith("Bearer")
    for path in ("/", "/healthz", "/openapi.json", "/static/viewer.js", "/static/viewer.css"):
        assert client.get(path).status_code == 200, path
    assert "<title>layered-memory viewer</title>" in client.get("/").text


def user_routes() -> list[str]:
    return [r.path for r in ROUTES if r.method == "GET" and r.path.startswith("/v1/users/{user_id}") and r.run is not None]


def fill(path: str, user: str) -> str:
    return (path.replace("{user_id}", user).replace("{chat_id}", "telegram:2").replace("{message_id}", "telegram-boris-0")
            .replace("{topic_id}", "t-1").replace("{task_id}", "t-earplugs").replace("{fact_id}", "e-1")) + "?q=Berlin"


def test_a_user_key_reaches_only_its_user(client: TestClient) -> None:
    assert client.get("/v1/me", headers=auth("anna")).json() == {"tenant": TENANT, "user": ANNA, "key": "anna"}
    assert client.get("/v1/users", headers=auth("anna")).json() == {"users": [ANNA]}
    for path in user_routes():  # every read of another user of the same tenant: 403, nothing read
        r = client.get(fill(path, BORIS), headers=auth("anna"))
        assert r.status_code == 403 and BORIS_MARK not in r.text, (path, r.text)
    for method, path in (("DELETE", "/v1/users/boris/facts/e-1"), ("POST", "/v1/users/boris/tasks/t-earplugs/complete"),
                         ("DELETE", "/v1/users/boris/chats/telegram:2/messages/telegram-boris-0")):
        assert client.request(method, path, headers=auth("anna")).status_code == 403
    found = client.post("/v1/search", headers=auth("anna"), json={"query": f"Berlin concert {BORIS_MARK}", "k": 50}).json()
    assert all(h["meta"]["user_id"] == ANNA for h in found["hits"]) and BORIS_MARK not in json.dumps(found)
    assert client.get("/v1/agents/check", headers=auth("anna")).status_code == 405
    assert client.post("/v1/agents/check", headers=auth("anna")).status_code == 403  # tenant-wide: not for a user key


def test_a_tenant_key_sees_its_users_and_nothing_of_another_tenant(client: TestClient) -> None:
    assert client.get("/v1/users", headers=auth("admin")).json() == {"users": [ANNA, BORIS]}
    assert client.get("/v1/users", headers=auth("other")).json() == {"users": [ANNA]}  # the same user id, another tenant
    as_other = [client.get(fill(p, ANNA).replace("telegram:2", "web:7"), headers=auth("other")).text for p in user_routes()]
    assert all("Kubernetes" not in t and "Alfama" not in t for t in as_other)
    assert client.get("/v1/users/anna/chats", headers=auth("other")).json()["chats"] == ["telegram:1"]
    mine = client.get("/v1/users/anna/chats/telegram:1/messages", headers=auth("other")).text
    assert OTHER_MARK in mine and "Alfama" not in mine
    found = client.post("/v1/search", headers=auth("admin"), json={"query": f"Lisbon {OTHER_MARK}", "k": 100}).text
    assert OTHER_MARK not in found


def test_the_viewer_reads_are_the_engines_answers(client: TestClient, store: LayeredMemory) -> None:
    u = store.tenant(TENANT).for_user(ANNA)
    get = lambda path, **q: client.get(f"/v1/users/anna{path}", params=q, headers=auth("anna"))  # noqa: E731
    assert get("/chats").json()["chats"] == ["telegram:1", "web:7"]
    msgs = get("/chats/telegram:1/messages", limit=4).json()["messages"]
    assert [m["message_id"] for m in msgs] == [m.message_id for m in u.get_session_messages(None, "telegram:1", limit=4)]
    summary = get("/chats/telegram:1/summary").json()
    assert summary["summary"] == u.get_summary(None, "telegram:1") and summary["quality"]["version"] >= 1

    ctx = get("/chats/telegram:1/context", query="where is the hotel", max_tokens=500).json()
    expected = u.get_context_for_user(None, "telegram:1", query="where is the hotel", max_tokens=500)
    assert [(b["kind"], b["content"]) for b in ctx["blocks"]] == [(m.kind, m.content) for m in expected]
    assert [b["tokens"] for b in ctx["blocks"]] == [u.count_tokens(m.content) for m in expected]
    assert ctx["total_tokens"] == sum(b["tokens"] for b in ctx["blocks"]) <= 500
    assert {b["kind"] for b in ctx["blocks"]} >= {"summary", "user_data", "window", "memory"}

    topics = get("/chats/telegram:1/topics").json()["topics"]
    assert [t["topic_id"] for t in topics] == [t.topic_id for t in u.topics.list("telegram:1")]
    assert [t["create_time"] for t in topics] == sorted(t["create_time"] for t in topics)  # a timeline
    detail = get(f"/topics/{topics[0]['topic_id']}").json()
    versions = u.topics.summaries(topics[0]["topic_id"])
    assert [s["version"] for s in detail["summaries"]] == [s.version for s in versions] and len(versions) >= 1
    assert detail["summaries"][-1]["metadata"]["quality"]["overall_score"] is not None
    assert {m["message_id"] for m in detail["messages"]} == {m.message_id for m in u.topics.messages(topics[0]["topic_id"])}

    facts = get("/facts").json()
    names = {e["entity_name"] for e in facts["entities"]}
    assert {"Lisbon", "Alfama", "TAP", "Kubernetes"} <= names and "Berlin" not in names and "Zurich" not in names
    lisbon = next(e for e in facts["entities"] if e["entity_name"] == "Lisbon")
    assert lisbon["source_messages"] and all("Lisbon" in m["content"] or "TAP" in m["content"] for m in lisbon["source_messages"])
    assert any(r["relation_type"] == "located_in" for r in facts["relations"])
    assert facts["profile"]["user_id"] == ANNA and facts["profile"]["source_messages"]


def test_search_shows_the_dense_and_bm25_ranks_of_each_hybrid_hit(client: TestClient, store: LayeredMemory) -> None:
    u = store.tenant(TENANT).for_user(ANNA)
    res = client.get("/v1/users/anna/search", params={"q": "Lisbon hotel tram", "k": 5}, headers=auth("anna")).json()
    assert res["routes"] == {"hybrid": "hybrid", "dense": "dense", "bm25": "bm25"}
    assert [h["id"] for h in res["hits"]] == [h.id for h in u.search("Lisbon hotel tram", k=5).hits]
    dense = [h.id for h in u.search("Lisbon hotel tram", k=50, route="dense").hits]
    bm25 = [h.id for h in u.search("Lisbon hotel tram", k=50, route="bm25").hits]
    for h in res["hits"]:
        assert h["dense_rank"] == (dense.index(h["id"]) + 1 if h["id"] in dense else None)
        assert h["bm25_rank"] == (bm25.index(h["id"]) + 1 if h["id"] in bm25 else None)
    assert any(h["dense_rank"] != h["bm25_rank"] for h in res["hits"])  # the two routes disagree somewhere: both shown
    assert {f["entity_name"] for f in res["facts"]} >= {"Lisbon"}


def count_all(mem: LayeredMemory) -> tuple[int, int, int]:
    acme = mem.tenant(TENANT)
    return (acme.records.count_messages(TENANT), len(acme.list_tasks(ANNA)) + len(acme.list_tasks(BORIS)),
            len(acme.knowledge.list_facts()["entities"]))


BAD_WRITES: list[tuple[str, str, Any, int, str]] = [
    ("POST", "/v1/messages", b"{not json", 400, "BadRequest"),
    ("POST", "/v1/messages", b"\xff\xfe", 400, "BadRequest"),
    ("POST", "/v1/messages", [1, 2], 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "n1", "chat_id": "c1"}, 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "n1", "chat_id": "c1", "content": "x", "role": "robot"}, 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "n1", "chat_id": "c1", "content": "x", "extra": 1}, 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "n 1", "chat_id": "c1", "content": "x"}, 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "n1", "chat_id": "c1", "content": "x", "user_id": BORIS}, 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "n1", "chat_id": "c1", "content": "x", "create_time": "yesterday"}, 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "n1", "chat_id": "c1", "content": "x" * 40_000}, 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "telegram-boris-0", "chat_id": "telegram:2", "content": "mine now"}, 422, "InvalidInputError"),
    ("POST", "/v1/messages", {"message_id": "n1", "chat_id": "c1", "content": "x" * 2_000_000}, 413, "BodyTooLarge"),
    ("POST", "/v1/users/anna/tasks", {"title": "x", "due": "next week"}, 422, "InvalidInputError"),
    ("POST", "/v1/users/anna/tasks", {"description": "no title"}, 422, "InvalidInputError"),
    ("PATCH", "/v1/users/anna/tasks/t-boarding", {}, 422, "InvalidInputError"),
    ("PATCH", "/v1/users/anna/tasks/t-boarding", {"status": "someday"}, 422, "InvalidInputError"),
    ("PATCH", "/v1/users/anna/tasks/t-earplugs", {"status": "done"}, 404, "NotFoundError"),
    ("POST", "/v1/users/anna/tasks/t-nope/complete", None, 404, "NotFoundError"),
    ("DELETE", "/v1/users/anna/facts/e-0000000000000000", None, 404, "NotFoundError"),
    ("DELETE", "/v1/users/anna/facts/lisbon", None, 422, "InvalidInputError"),
    ("POST", "/v1/search", {"query": "x", "k": 0}, 422, "InvalidInputError"),
    ("POST", "/v1/search", {"query": "x", "route": "sideways"}, 422, "InvalidInputError"),
    ("POST", "/v1/search", {}, 422, "InvalidInputError"),
]


@pytest.mark.parametrize("method, path, body, status, kind", BAD_WRITES, ids=[f"{m} {p} {s}" for m, p, _, s, _ in BAD_WRITES])
def test_a_refused_request_is_a_4xx_json_error_and_writes_nothing(client: TestClient, store: LayeredMemory, method: str, path: str,
                                                                   body: Any, status: int, kind: str) -> None:
    before = count_all(store)
    content = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
    r = client.request(method, path, content=content, headers={**auth("anna"), "content-type": "application/json"})
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["type"] == kind and err["message"]
    if kind == "InvalidInputError":
        assert err["field"] and err["rule"] and err["fix"]
    assert count_all(store) == before
    assert store.tenant(TENANT).get_messages(["n1"], chat_id="c1") == [None]


def test_bad_query_parameters_name_the_parameter(client: TestClient) -> None:
    cases = {"?q=x&k=0": "k", "?q=x&k=ten": "k", "?q=x&q=y": "q", "?q=x&color=red": "color", "": "q"}
    for query, field in cases.items():
        r = client.get("/v1/users/anna/search" + query, headers=auth("anna"))
        assert r.status_code == 422 and r.json()["error"]["field"] == field, (query, r.text)
    r = client.get("/v1/users/anna/topics/t-unknown", headers=auth("anna"))
    assert r.status_code == 404 and r.json()["error"]["type"] == "NotFoundError"
    r = client.put("/v1/users/anna/chats", headers=auth("anna"))
    assert r.status_code == 405 and r.json()["error"]["message"]


def test_writes_through_the_api_are_the_engines_writes(client: TestClient, store: LayeredMemory) -> None:
    r = client.post("/v1/messages", headers=auth("anna"), json={"message_id": 77, "chat_id": "web:7", "content": "Deploy frozen until Monday",
                                                                "create_time": "2024-05-03T10:00:00Z"})
    assert r.status_code == 201 and r.json()["user_id"] == ANNA and r.json()["message_id"] == "77"
    assert store.tenant(TENANT).get_messages(["77"], chat_id="web:7")[0].content == "Deploy frozen until Monday"
    again = client.post("/v1/messages", headers=auth("anna"), json={"message_id": "77", "chat_id": "web:7", "content": "changed"})
    assert again.status_code == 201 and again.json()["content"] == "Deploy frozen until Monday"  # idempotent: the stored copy
    t = client.post("/v1/users/anna/tasks", headers=auth("anna"), json={"title": "Unfreeze deploys", "task_id": "t-unfreeze"}).json()
    assert t["status"] == "open"
    assert client.patch("/v1/users/anna/tasks/t-unfreeze", headers=auth("anna"), json={"status": "in_progress"}).json()["status"] == "in_progress"
    assert client.post("/v1/users/anna/tasks/t-unfreeze/complete", headers=auth("anna")).json()["status"] == "done"
    assert store.tenant(TENANT).get_task(ANNA, "t-unfreeze").status == "done"
    listed = client.get("/v1/users/anna/tasks", params={"status": "done"}, headers=auth("anna")).json()["tasks"]
    assert [x["task_id"] for x in listed] == ["t-unfreeze"]


def test_deleting_a_fact_removes_it_with_its_relations_from_facts_search_and_context(tmp_path: Any) -> None:
    mem = open_store(str(tmp_path))
    seed(mem)
    u = mem.tenant(TENANT).for_user(ANNA)
    with TestClient(create_app(mem, KeyRing.parse(KEYS), run_monitor=False)) as c:
        facts = c.get("/v1/users/anna/facts", headers=auth("anna")).json()
        alfama = next(e for e in facts["entities"] if e["entity_name"] == "Alfama")
        assert any(r["source"] == "Alfama" for r in facts["relations"])
        # the context's long tier draws on these (a fact whose message is already a line is left out of the context)
        assert "Alfama" in {e["entity_name"] for e in u.knowledge.search_entities("hotel in Alfama", k=5)}
        r = c.delete(f"/v1/users/anna/facts/{alfama['entity_id']}", headers=auth("anna"))
        assert r.json() == {"fact_id": alfama["entity_id"], "kind": "entity", "deleted": True, "relations_deleted": 1}
        after = c.get("/v1/users/anna/facts", headers=auth("anna")).json()
        assert "Alfama" not in {e["entity_name"] for e in after["entities"]}
        assert not any("Alfama" in (r["source"], r["target"]) for r in after["relations"])
        assert "Alfama" not in {f["entity_name"] for f in c.get("/v1/users/anna/search", params={"q": "Alfama"}, headers=auth("anna")).json()["facts"]}
        assert "Alfama" not in {e["entity_name"] for e in u.knowledge.search_entities("hotel in Alfama", k=5)}
        assert not any("Alfama (" in line for line in _fact_lines(u, "hotel in Alfama"))
        assert c.delete(f"/v1/users/anna/facts/{alfama['entity_id']}", headers=auth("anna")).status_code == 404
    mem.close()


def _fact_lines(u: LayeredMemory, query: str) -> list[str]:
    blocks = [m.content for m in u.get_context_for_user(None, "telegram:1", query=query) if m.kind == "memory"]
    return [line for b in blocks for line in b.splitlines() if line.startswith("- fact: ")]


def test_a_user_key_forgets_a_shared_fact_only_for_its_user(tmp_path: Any) -> None:
    mem = group_chat_store(str(tmp_path))
    acme = mem.tenant(TENANT)
    lisbon = next(e for e in acme.knowledge.list_facts()["entities"] if e["entity_name"] == "Lisbon")
    assert lisbon["user_ids"] == [ANNA, BORIS]
    with TestClient(create_app(mem, KeyRing.parse(KEYS), run_monitor=False)) as c:
        out = c.delete(f"/v1/users/anna/facts/{lisbon['entity_id']}", headers=auth("anna")).json()
        assert out["deleted"] is False
        assert "Lisbon" not in {e["entity_name"] for e in c.get("/v1/users/anna/facts", headers=auth("anna")).json()["entities"]}
        assert "Lisbon" in {e["entity_name"] for e in c.get("/v1/users/boris/facts", headers=auth("boris")).json()["entities"]}
        assert acme.for_user(ANNA).knowledge.search_entities("Lisbon") == []
        assert [e["entity_name"] for e in acme.for_user(BORIS).knowledge.search_entities("Lisbon")] == ["Lisbon"]
        assert c.delete(f"/v1/users/boris/facts/{lisbon['entity_id']}", headers=auth("boris")).json()["deleted"] is True
        assert acme.knowledge.list_facts()["entities"] == [] or "Lisbon" not in {e["entity_name"] for e in acme.knowledge.list_facts()["entities"]}
    mem.close()


def test_deleting_a_message_removes_it_from_the_chat_and_search(tmp_path: Any) -> None:
    mem = open_store(str(tmp_path), chat_model=False)
    seed(mem)
    with TestClient(create_app(mem, KeyRing.parse(KEYS), run_monitor=False)) as c:
        path = "/v1/users/anna/chats/telegram:1/messages/telegram-anna-4"
        assert c.get(path, headers=auth("anna")).json()["content"].startswith("In Lisbon I want")
        assert c.delete(path.replace("anna", "boris", 1), headers=auth("anna")).status_code == 403
        assert c.delete(path, headers=auth("anna")).status_code == 200
        assert c.get(path, headers=auth("anna")).status_code == 404
        hits = c.get("/v1/users/anna/search", params={"q": "pastel de nata"}, headers=auth("anna")).json()["hits"]
        assert "telegram-anna-4" not in {h["id"] for h in hits}
        assert c.delete(path, headers=auth("anna")).status_code == 404
    mem.close()


def test_the_agent_monitor_streams_size_events_to_the_users_viewer(store: LayeredMemory) -> None:
    coder = store.tenant(TENANT).agents.get(ANNA, "coder")
    coder.add_interactions([{"text": f"step {i}", "interaction_type": "tool_call"} for i in range(7)])  # 9 of 10: over 80 %
    got: list[str] = []
    connected = threading.Event()
    with running(create_app(store, KeyRing.parse(KEYS), run_monitor=False)) as base:
        def listen(who: str) -> None:
            with httpx.stream("GET", f"{base}/v1/users/{'anna' if who != 'boris' else 'boris'}/agents/events", params={"limit": 1},
                              headers=auth(who), timeout=30) as r:
                for line in r.iter_lines():
                    if line.startswith(": connected"):
                        connected.set()
                    if line.startswith(("event:", "data:")):
                        got.append(f"{who} {line}")

        reader = threading.Thread(target=listen, args=("anna",), daemon=True)
        reader.start()
        assert connected.wait(10)
        agents = httpx.get(f"{base}/v1/users/anna/agents", headers=auth("anna")).json()["agents"]
        assert agents[0]["agent_name"] == "coder" and agents[0]["stats"]["total_vectors"] == 9
        checked = httpx.post(f"{base}/v1/agents/check", headers=auth("admin")).json()["events"]
        reader.join(10)
    assert [e["kind"] for e in checked] == ["size_warning"]
    assert got[0] == "anna event: size_warning" and '"agent_name": "coder"' in got[1]


def test_several_workers_serve_one_server_backed_store(tmp_path: Any, redis_url: str, redis_prefix: str) -> None:
    """``serve --workers 2`` on Redis (records and BM25): a write through one request is read by the next ones."""
    keys_file = str(tmp_path / "keys.json")
    token = add_key(keys_file, tenant=TENANT, user=ANNA)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "LAYERED_MEMORY_REDIS__PREFIX": redis_prefix}
    proc = subprocess.Popen([sys.executable, "-m", "layered_memory.cli", "--redis-url", redis_url, "--embedder", "none", "--tenant", TENANT,
                             "serve", "--workers", "2", "--port", str(port), "--keys", keys_file, "--no-monitor"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base, headers = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {token}"}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate(timeout=5)
            time.sleep(0.2)
        r = httpx.post(base + "/v1/messages", headers=headers, json={"message_id": "w1", "chat_id": "c1", "content": "written once"})
        assert r.status_code == 201, r.text
        pids = set()
        for _ in range(12):  # a new connection each time: the workers share the listening socket
            assert httpx.get(base + "/v1/users/anna/chats/c1/messages", headers=headers).json()["messages"][0]["content"] == "written once"
            pids.add(httpx.get(base + "/healthz").json()["pid"])
        print(f"answered by worker pids {sorted(pids)}")
    finally:
        proc.terminate()
        proc.wait(20)


def test_a_group_chat_shows_every_members_messages_and_a_member_deletes_only_their_own(tmp_path: Any) -> None:
    mem = group_chat_store(str(tmp_path))
    with TestClient(create_app(mem, KeyRing.parse(KEYS), run_monitor=False)) as c:
        assert "group:1" in c.get("/v1/users/anna/chats", headers=auth("anna")).json()["chats"]
        shown = c.get("/v1/users/anna/chats/group:1/messages", headers=auth("anna")).json()["messages"]
        assert {m["user_id"] for m in shown} == {ANNA, BORIS}  # the engine's membership rule, as the viewer shows it
        boris_msg = next(m["message_id"] for m in shown if m["user_id"] == BORIS)
        r = c.delete(f"/v1/users/anna/chats/group:1/messages/{boris_msg}", headers=auth("anna"))
        assert r.status_code == 422 and r.json()["error"]["type"] == "InvalidInputError"
        assert mem.tenant(TENANT).get_messages([boris_msg], chat_id="group:1")[0] is not None
        anna_msg = next(m["message_id"] for m in shown if m["user_id"] == ANNA)
        assert c.delete(f"/v1/users/anna/chats/group:1/messages/{anna_msg}", headers=auth("anna")).status_code == 200
        assert c.get("/v1/users/other/chats", headers=auth("other")).json()["chats"] == []
    mem.close()
