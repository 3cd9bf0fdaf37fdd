"""The topic tier's side of ``mem.edit_message`` / ``mem.delete_message`` / ``mem.clear_session``
(``layered_memory.edits`` calls it).

* An edited text in a threaded message: the topic's summary, when it covers the message, is marked stale
  (``summary_stale`` on the topic, a summary job with the trigger ``"edit"``, ``stale`` on its index point so
  the context leaves it out) and rewritten by the next ``process()`` without the old version's text; and the
  message is queued for **re-threading** (``topic_rethread``). ``rethread`` (run by ``process()`` before
  threading) keeps it in its topic when it still fits (a reply into the topic, a message too short to judge,
  or a similarity to the topic above ``ambiguous_threshold``), else takes it out (membership row, counter,
  ``topic_id`` on the record) and queues it for threading again, which places it like a new message.
* A deleted message leaves its topic (membership row, counter, recent ids); the summary that covered it is
  marked stale; a topic left without messages goes with its summaries and their point (its title came from
  the deleted text). A cleared session's messages leave their topics the same way, one pass per topic.
* A topic whose title was written from the edited or deleted message (its first one) is titled again at
  once by the keywords of its first message now (no model call on the write path), and with a chat model by
  the model when its summary is next written (``title_stale``).

Every step is idempotent: the engine's delete intent (or the ``topic_rethread`` marker, removed last) runs it
again after a crash.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..index.points import point_id
from ..models import Message, MessageRef, parse_time
from .store import ACTIVE, JOBS, SUMMARIES, TOPIC_MSGS, TOPICS, TopicStore, seq_key
from .summaries import KIND
from .threader import Threader, content_terms, keyword_title, message_vectors, rank_topics

if TYPE_CHECKING:
    from ..kernel import Kernel
    from .llm import ModelCaller

logger = logging.getLogger(__name__)

RETHREAD = "topic_rethread"  # <seq:012d>|<chat_id>|<message_id> -> {"chat_id", "message_id", "topic_id"}
_ALL = 10**9


def _covers(topic: dict[str, Any], seq: int | None) -> bool:
    """Whether the topic's latest summary was written over the message at ``seq`` (or after it)."""
    return bool(topic.get("summary_version")) and int(seq or 0) <= int(topic.get("covered_seq") or 0)


def _mark_summary_stale(core: Kernel, store: TopicStore, topic: dict[str, Any], why: dict[str, Any], *, flag_point: bool = True) -> None:
    """The topic's summary quotes a changed message: marked, queued for a rewrite, its point flagged (unless the
    caller removes the point: ``_redact``)."""
    stale = [w for w in topic.get("summary_stale") or [] if w != why] + [why]
    topic["summary_stale"] = stale[-20:]
    store.add_jobs({topic["topic_id"]: why["reason"]})
    if core.index is not None and flag_point:
        try:
            core.index.set_payload(core.indexer.collection, [point_id(store.tenant, KIND, topic["topic_id"])], {"stale": 1})
        except Exception as exc:  # no point yet (or the index is down): the context reads the topic's flag next time
            logger.debug("flagging the summary point of topic %s failed (%s)", topic["topic_id"], exc)


def _leave(core: Kernel, store: TopicStore, topic: dict[str, Any], members: list[tuple[str, int | None, str | None]],
           why: dict[str, Any] | None) -> None:
    """Messages (``(message_id, seq, create_time)``; the time only of deleted ones) leave the topic: membership
    rows, counter, recent ids; a topic left empty goes. A deleted message's text leaves the summaries too."""
    tid = topic["topic_id"]
    core.records.delete_docs(store.tenant, TOPIC_MSGS, [f"{tid}|{seq_key(seq)}" for _, seq, _ in members])
    count = store.member_count(tid)
    if count == 0:
        drop_topic(core, store, topic)
        return
    gone = {message_id for message_id, _, _ in members}
    rows = store.members(tid)
    topic["message_count"] = count
    topic["recent"] = [i for i in topic.get("recent") or [] if i not in gone]
    topic["user_ids"] = sorted({r["u"] for r in rows if r.get("u")})  # who still took part
    if any(int(seq or 0) == int(topic.get("first_seq") or 0) for _, seq, _ in members) and rows:  # the title's message left
        first = core.records.get_messages(store.tenant, store.member_refs(topic, rows[:1]))[0]
        if first is not None:
            _retitle(core, topic, first)
    if why is not None and any(_covers(topic, seq) for _, seq, _ in members):
        times = [t for _, seq, t in members if t and _covers(topic, seq)]  # deleted ones (an older intent has no time)
        _mark_summary_stale(core, store, topic, why, flag_point=not times)
        if times:
            _redact(core, store, topic, min(times), why)
    store.put([topic])


def _redact(core: Kernel, store: TopicStore, topic: dict[str, Any], since: str, why: dict[str, Any]) -> None:
    """A deleted message's words leave the summary history: every version written over it (its messages end at
    ``since`` or later; a version carries the one before it) loses its text, keywords and title, the topic its
    keywords, and the topic's point goes until ``process()`` writes the next version (``summary_redacted``).
    Older versions stay whole."""
    tid, at = topic["topic_id"], parse_time("since", since)
    hit = {k: {**d, "content": "", "keywords": {}, "title": topic["title"], "redacted": why}
           for k, d in core.records.list_docs(store.tenant, SUMMARIES, prefix=f"{tid}|", limit=_ALL)
           if not d.get("redacted") and parse_time("end_time", (d.get("metadata") or {}).get("end_time") or since) >= at}
    if hit:
        core.records.put_docs(store.tenant, SUMMARIES, hit)
    topic["summary_redacted"] = True
    topic["keywords"] = {}  # written with the summary (``mem.topics.get``): the next version writes them again
    if core.index is not None:  # a failure leaves a point the doctor reports as an orphan and removes
        core.index.delete(core.indexer.collection, ids=[point_id(store.tenant, KIND, tid)])


def _retitle(core: Kernel, topic: dict[str, Any], first: Message) -> None:
    """The topic's title came from a message that was edited or left: titled now by the keywords of ``first``
    (its first message now; no model call on the write path), and, with a chat model, by the model at the
    topic's next summary (``title_stale``)."""
    topic["title"] = keyword_title(first.content, core.analyzer)
    topic["first_seq"] = int(first.seq or 0)
    if core.chat_model is not None:
        topic["title_stale"] = True


def drop_topic(core: Kernel, store: TopicStore, topic: dict[str, Any]) -> None:
    """Remove a topic with no messages left: its document, active row, jobs, summary versions and point."""
    tid, tenant = topic["topic_id"], store.tenant
    versions = [k for k, _ in core.records.list_docs(tenant, SUMMARIES, prefix=f"{tid}|", limit=_ALL)]
    if versions:
        core.records.delete_docs(tenant, SUMMARIES, versions)
    core.records.delete_docs(tenant, JOBS, [tid])
    core.records.delete_docs(tenant, ACTIVE, [f"{topic['chat_id']}|{tid}"])
    core.records.delete_docs(tenant, TOPICS, [tid])
    if core.index is not None:  # a failure leaves an orphan point: the open check and the doctor remove it
        core.index.delete(core.indexer.collection, ids=[point_id(tenant, KIND, tid)])
    logger.info("topic %s of tenant %s removed: its last message was deleted or moved", tid, tenant)


# -- called by layered_memory.edits (under the engine's write lock) ----------------------------------------
def on_edited(core: Kernel, tenant: str, msg: Message, why: dict[str, Any]) -> None:
    """A threaded message's text changed: stale summary, and a re-threading check at the next ``process()``."""
    if not core.settings.topics.enabled or not msg.topic_id:
        return  # not threaded yet: threading reads the new text
    store = TopicStore(core.records, tenant)
    topic = store.get([msg.topic_id])[0]
    if topic is None:
        return
    retitled = int(msg.seq or 0) == int(topic.get("first_seq") or 0)  # the title was written from the old text
    if retitled:
        _retitle(core, topic, msg)
    if _covers(topic, msg.seq):
        _mark_summary_stale(core, store, topic, why)
    if retitled or _covers(topic, msg.seq):
        store.put([topic])
    core.records.put_docs(tenant, RETHREAD, {
        f"{seq_key(msg.seq)}|{msg.chat_id}|{msg.message_id}": {"chat_id": msg.chat_id, "message_id": msg.message_id, "topic_id": msg.topic_id},
    })


def on_deleted(core: Kernel, tenant: str, gone: dict[str, Any], why: dict[str, Any]) -> None:
    """A deleted message (``gone``: chat_id, message_id, seq, topic_id of the record) leaves its topic."""
    core.records.delete_docs(tenant, RETHREAD, [f"{seq_key(gone['seq'])}|{gone['chat_id']}|{gone['message_id']}"])
    if not gone.get("topic_id"):
        return
    store = TopicStore(core.records, tenant)
    topic = store.get([gone["topic_id"]])[0]
    if topic is not None:
        _leave(core, store, topic, [(gone["message_id"], gone["seq"], gone.get("create_time"))], why)


def on_cleared(core: Kernel, tenant: str, gone: list[dict[str, Any]], at: str) -> None:
    """A cleared session's threaded messages (``gone``: chat_id, message_id, seq, topic_id of each record) leave
    their topics, one pass per topic: a topic made only of them goes with its summaries, one that keeps other
    messages (another session's, another member's) has its summary marked stale when it covered any of them."""
    core.records.delete_docs(tenant, RETHREAD, [f"{seq_key(g['seq'])}|{g['chat_id']}|{g['message_id']}" for g in gone])
    by_topic: dict[str, list[tuple[str, int | None, str | None]]] = {}
    for g in gone:
        if g.get("topic_id"):
            by_topic.setdefault(g["topic_id"], []).append((g["message_id"], g["seq"], g.get("create_time")))
    store = TopicStore(core.records, tenant)
    for topic in store.get(list(by_topic)):
        if topic is not None:
            members = by_topic[topic["topic_id"]]
            why = {"reason": "delete", "chat_id": topic["chat_id"], "message_id": members[0][0], "at": at}
            _leave(core, store, topic, members, why)


# -- process(): re-threading of edited messages ----------------------------------------------------------
def _fits(core: Kernel, store: TopicStore, caller: ModelCaller, topic: dict[str, Any], msg: Message) -> bool:
    """Whether an edited message still belongs to its topic (see the module docstring)."""
    s, tenant = core.settings.topics, store.tenant
    if msg.reply_ref is not None:
        parent = core.records.get_messages(tenant, [msg.reply_ref])[0]
        if parent is not None and parent.topic_id == topic["topic_id"]:
            return True  # the reply chain decides, whatever the words
    terms = core.analyzer.terms(msg.content)
    if content_terms(terms) < s.min_terms:
        return True
    th = Threader(store, core.analyzer, s, caller, embedder=core.embedder)  # its similarity calibration
    vector = message_vectors(core, tenant, [msg]).get(msg.ref)
    ranked = rank_topics([topic], vector=vector, terms=terms, floor=th.floor, topical=th.topical, latest_id=None,
                         gap_seconds=None, settings=s)
    return ranked[0][1] > s.ambiguous_threshold


def rethread(core: Kernel, store: TopicStore, caller: ModelCaller) -> int:
    """Check every queued edited message of the store's tenant against its topic; a message that no longer
    fits leaves it and is queued for threading (``thread_batch`` places it). Returns how many left their topic."""
    tenant = store.tenant
    moved = 0
    while rows := core.records.list_docs(tenant, RETHREAD, limit=100):
        for key, mark in rows:
            ref = MessageRef(mark["chat_id"], mark["message_id"])
            msg = core.records.get_messages(tenant, [ref])[0]
            old = store.get([mark["topic_id"]])[0]
            # decided outside the write lock (it may embed the message)
            fits = msg is None or old is None or msg.topic_id != old["topic_id"] or _fits(core, store, caller, old, msg)
            with core.write_lock:
                if core.records.get_messages(tenant, [ref])[0] != msg:
                    continue  # edited or threaded meanwhile: decided again (the marker is still there)
                if msg is not None and old is not None and msg.topic_id != old["topic_id"]:
                    # moved by a run that stopped before removing this marker: the old row must not stay
                    if core.records.get_docs(tenant, TOPIC_MSGS, [f"{old['topic_id']}|{seq_key(msg.seq)}"])[0] is not None:
                        _leave(core, store, old, [(msg.message_id, msg.seq, None)], None)
                elif msg is not None and old is not None and not fits:
                    store.enqueue([(msg.seq, msg.message_id, msg.chat_id)])  # first: a stop after it threads it again
                    core.records.update_messages(tenant, [msg.model_copy(update={"topic_id": None})])
                    _leave(core, store, old, [(msg.message_id, msg.seq, None)], None)
                    moved += 1
                core.records.delete_docs(tenant, RETHREAD, [key])
    if moved:
        logger.info("re-threading: %d edited messages of tenant %s left their topic", moved, tenant)
    return moved


__all__ = ["RETHREAD", "drop_topic", "on_cleared", "on_deleted", "on_edited", "rethread"]
