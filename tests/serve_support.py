"""A seeded store for the ``serve`` / ``mcp`` / viewer tests: tenant ``acme`` with users anna and boris
(messages, topics with summaries, facts with provenance, user data, tasks, an agent) and tenant
``other`` whose content carries ``OTHER_MARK`` (a client of acme must never see it).

The chat model is scripted (no hosted LLM): titles, summaries, entities, relations and profiles come
from a small gazetteer of the names the conversation mentions, so every tier has data to show.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.config import TopicSettings
from layered_memory.testing import HashEmbedder

T0 = datetime(2024, 5, 2, 9, 0, tzinfo=timezone.utc)
TENANT, OTHER = "acme", "other"
ANNA, BORIS = "anna", "boris"
OTHER_MARK = "ZEPHYRQUOKKA"  # only in tenant other's content
BORIS_MARK = "MARZIPANOTTER"  # only in boris's content

GAZETTEER = {  # name -> (type, description)
    "Lisbon": ("LOCATION", "the city of the May trip"),
    "Alfama": ("LOCATION", "the quarter of the hotel"),
    "TAP": ("ORGANIZATION", "the airline of the flight"),
    "Kubernetes": ("PRODUCT", "runs the payments service"),
    "Berlin": ("LOCATION", "the city of the concert"),
    "Zurich": ("LOCATION", "another tenant's city"),
}
RELATIONS = [("Alfama", "located_in", "Lisbon"), ("TAP", "flies_to", "Lisbon")]

CHATS: dict[tuple[str, str, str], list[tuple[str, str]]] = {  # (tenant, user, chat) -> [(role, text)]
    (TENANT, ANNA, "telegram:1"): [
        ("user", "We fly to Lisbon on May 3 with TAP"), ("assistant", "Noted: TAP flight to Lisbon on May 3"),
        ("user", "Book the hotel in Alfama, the old Lisbon quarter near the tram"), ("assistant", "Alfama hotel near the tram: booked"),
        ("user", "In Lisbon I want to try pastel de nata"), ("assistant", "Pastel de nata in Lisbon: Belem bakery"),
    ],
    (TENANT, ANNA, "web:7"): [
        ("user", "The payments pod on Kubernetes fails with CrashLoopBackOff"),
        ("assistant", "Roll back the Kubernetes deploy and read the pod logs"),
        ("user", "Rollback done, payments pod healthy again"),
    ],
    (TENANT, BORIS, "telegram:2"): [
        ("user", f"Concert in Berlin on Friday, code word {BORIS_MARK}"), ("assistant", f"Berlin concert Friday noted ({BORIS_MARK})"),
        ("user", "Bring earplugs to the Berlin concert"),
    ],
    (OTHER, ANNA, "telegram:1"): [
        ("user", f"Other tenant secret about Lisbon: {OTHER_MARK}"), ("assistant", f"Kept: {OTHER_MARK} in Zurich"),
    ],
}


class ScriptedModel:
    """A chat model answering each tier's prompt from the names it finds in the prompt."""

    name = "serve-scripted"

    def complete(self, prompt: str, *, system: str | None = None, operation: str | None = None) -> str:
        names = [n for n in GAZETTEER if re.search(rf"\b{re.escape(n)}\b", prompt)]
        marks = " ".join(m for m in (OTHER_MARK, BORIS_MARK) if m in prompt)
        head = prompt.lstrip()
        if head.startswith("Write a short title"):
            return (f"{names[0]} plans" if names else "Small talk")[:100]
        if head.startswith("Extract the important entities"):
            return json.dumps({"entities": [
                {"entity_name": n, "entity_type": GAZETTEER[n][0], "description": f"{GAZETTEER[n][1]} {marks}".strip(), "confidence": 0.9}
                for n in names]})
        if head.startswith("Extract the relations"):
            return json.dumps({"relations": [
                {"source_entity": s, "target_entity": t, "relation_type": r, "description": f"{s} {r} {t}", "exclusive": False}
                for s, r, t in RELATIONS if s in names and t in names]})
        if head.startswith("Build a profile"):
            return json.dumps({"profile_text": f"Talks about {', '.join(names) or 'everyday things'} {marks}".strip(),
                               "preferences": [{"key": "city", "value": names[0]}] if names else [], "traits": []})
        if head.startswith(("Summarize", "Merge", "You maintain")):
            return f"Summary: {', '.join(names) or 'small talk'} {marks}".strip()
        return "1"


def settings() -> LayeredMemorySettings:
    s = LayeredMemorySettings(topics=TopicSettings(summary_every_messages=3))
    s.memory.summary_threshold_messages = 4
    s.memory.short_term_window = 4
    s.topics.idle_timeout_seconds = 10 * 365 * 86400.0
    return s


def rows(tenant: str, user: str, chat: str, turns: list[tuple[str, str]], start: int = 0) -> list[dict[str, Any]]:
    base = T0 + timedelta(hours=len(chat) % 5)
    return [{"message_id": f"{chat.split(':')[0]}-{user}-{start + i}", "chat_id": chat, "user_id": user, "user_name": user.title(),
             "role": role, "content": text, "create_time": base + timedelta(minutes=start + i)} for i, (role, text) in enumerate(turns)]


def open_store(path: str, *, chat_model: bool = True) -> LayeredMemory:
    return LayeredMemory.embedded(path, embedder=HashEmbedder(), settings=settings(),
                                  chat_model=ScriptedModel().complete if chat_model else None)


def seed(mem: LayeredMemory) -> None:
    """Write the conversation of every (tenant, user, chat), then thread, summarize and extract facts."""
    for (tenant, user, chat), turns in CHATS.items():
        mem.tenant(tenant).for_user(user).add_messages(rows(tenant, user, chat, turns))
    acme = mem.tenant(TENANT)
    acme.set_user_data(ANNA, {"name": "Anna", "home": "Porto"})
    acme.create_task(ANNA, "Print the boarding passes", "TAP flight to Lisbon", task_id="t-boarding")
    acme.create_task(BORIS, f"Buy earplugs {BORIS_MARK}", task_id="t-earplugs")
    for tenant in (TENANT, OTHER):
        t = mem.tenant(tenant)
        t.process()
        for (tn, user, chat) in CHATS:
            if tn == tenant:
                t.refresh_summary(user, chat, force=True)
                for topic in t.topics.list(chat):
                    t.topics.summarize(topic.topic_id)
        t.process()  # the knowledge jobs the summaries queued
    coder = acme.agents.create(ANNA, "coder", max_vectors=10)
    coder.add_interaction("ran pytest: 3 failures in test_api.py", interaction_type="tool_call", success=False, task_id="t-7")
    coder.add_interaction("fixed the payments rollback script", interaction_type="tool_call", success=True, task_id="t-7")
    mem.tenant(OTHER).agents.create(ANNA, "coder").add_interaction(f"deployed {OTHER_MARK}", interaction_type="tool_call")
    mem.flush()


def group_chat_store(path: str) -> LayeredMemory:
    """A store where anna and boris both mention Lisbon in one group chat: a fact shared by two users."""
    mem = open_store(path)
    acme = mem.tenant(TENANT)
    acme.for_user(ANNA).add_messages(rows(TENANT, ANNA, "group:1", [("user", "Lisbon in May for the whole team")]))
    acme.for_user(BORIS).add_messages(rows(TENANT, BORIS, "group:1", [("user", "Lisbon works for me")], start=5))
    acme.process()
    for topic in acme.topics.list("group:1"):
        acme.topics.summarize(topic.topic_id)
    acme.process()
    return mem


def bulk(mem: LayeredMemory, n: int, *, tenant: str = TENANT, user: str = ANNA, chat: str = "telegram:1") -> None:
    """``n`` more messages in one chat (the viewer's load-time test), in batches."""
    words = ["Lisbon", "tram", "hotel", "flight", "museum", "dinner", "beach", "train", "ticket", "coffee"]
    for start in range(0, n, 500):
        batch = [("user" if i % 2 == 0 else "assistant", f"note {i}: the {words[i % 10]} and the {words[(i * 7) % 10]} plan")
                 for i in range(start, min(n, start + 500))]
        mem.tenant(tenant).for_user(user).add_messages(rows(tenant, user, chat, batch, start=1000 + start))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(app: Any, port: int | None = None) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on a free loopback port in a thread; yields its base URL."""
    import uvicorn

    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
