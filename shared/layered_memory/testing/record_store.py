"""The RecordStore conformance suite: subclass :class:`RecordStoreConformance` and override a fixture.

Every test takes a fresh, empty store. Override ``opener`` (a function returning a new handle on the
same storage at each call; the suite calls ``setup()`` and ``close()``), or ``store`` directly when the
storage cannot be reopened (then the reopen test is skipped)::

    class TestSQLiteFile(RecordStoreConformance):
        @pytest.fixture
        def opener(self, tmp_path):
            return lambda: SQLiteRecordStore(str(tmp_path / "records.sqlite3"))

A test may be overridden only with ``@pytest.mark.xfail(reason=...)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from ..errors import InvalidInputError, NotFoundError
from ..models import Message, MessageRef
from ..stores.base import RecentCache, RecordStore
from ._suite import forbid_silent_overrides

__all__ = ["A", "B", "Opener", "RecordStoreConformance", "ids", "mids", "msg", "refs"]

T0 = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)
A, B = "acme", "globex"  # two tenants

Opener = Callable[[], RecordStore]


def msg(mid: str, user: str = "u1", session: str = "s1", chat: str | None = None, tenant: str = A, **kw: Any) -> Message:
    """A message of tenant ``A`` (``n``: seconds after T0; other seed fields as keywords)."""
    n = kw.pop("n", 0)
    metadata = kw.pop("metadata", None)
    built = Message.build(
        {"message_id": mid, "chat_id": chat or session, "user_id": user, "session_key": session,
         "content": kw.pop("content", f"text of {mid}"), "tenant": tenant,
         "create_time": T0 + timedelta(seconds=n), **kw}
    )
    # Message.build refuses metadata JSON cannot hold; set it afterwards so the store's own check is tested
    return built if metadata is None else built.model_copy(update={"metadata": metadata})


def ids(messages: list[Message] | list[Message | None]) -> list[str]:
    return [m.message_id for m in messages if m is not None]


def refs(message_ids: list[str], chat: str = "s1") -> list[MessageRef]:
    """Refs of messages in one chat (``msg`` puts them in chat "s1" unless told)."""
    return [MessageRef(chat, m) for m in message_ids]


def mids(found: list[MessageRef]) -> list[str]:
    return [r.message_id for r in found]


class RecordStoreConformance:
    """The RecordStore protocol's behaviour, backend-neutral (see the module docstring)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        forbid_silent_overrides(cls, RecordStoreConformance)

    @pytest.fixture
    def opener(self) -> Opener | None:
        """Override: a function opening a new handle on the same (empty at first) storage at each call."""
        return None

    @pytest.fixture
    def store(self, opener: Opener | None) -> Iterator[RecordStore]:
        """An empty, set-up store; closed after the test."""
        if opener is None:
            pytest.fail("override the `opener` fixture (or `store`, when the storage cannot be reopened)")
        s = opener()
        s.setup()
        yield s
        s.close()

    @pytest.fixture(autouse=True)
    def _close_opened(self) -> Iterator[None]:
        self._opened: list[RecordStore] = []
        yield
        for s in self._opened:
            s.close()

    # -- lifecycle --------------------------------------------------------------------------------------
    def test_satisfies_protocol_and_setup_is_idempotent(self, store: RecordStore) -> None:
        assert isinstance(store, RecordStore)
        store.put_messages(A, [msg("m1")])
        store.setup()
        store.setup()
        assert store.count_messages(A) == 1


    # -- messages ---------------------------------------------------------------------------------------
    def test_put_is_idempotent_by_message_id(self, store: RecordStore) -> None:
        assert store.put_messages(A, [msg("m1"), msg("m2")]) == [True, True]
        assert store.put_messages(A, [msg("m1", content="changed"), msg("m3")]) == [False, True]
        assert store.put_messages(A, [msg("m4"), msg("m4", content="dup")]) == [True, False]
        assert store.put_messages(A, []) == []
        assert store.get_messages(A, refs(["m1"]))[0].content == "text of m1"  # type: ignore[union-attr]
        assert store.get_messages(A, refs(["m4"]))[0].content == "text of m4"  # type: ignore[union-attr]
        assert store.count_messages(A) == 4


    def test_seq_increases_in_insertion_order_and_is_never_reused(self, store: RecordStore) -> None:
        batch = [msg("z"), msg("a"), msg("m")]
        store.put_messages(A, batch)
        assert [m.seq for m in batch] == [1, 2, 3]  # assigned on the objects passed in
        store.put_messages(A, [msg("b", user="u2")])
        got = store.get_messages(A, refs(["z", "a", "m", "b"]))
        seqs = [m.seq for m in got]  # type: ignore[union-attr]
        assert seqs == sorted(seqs) and len(set(seqs)) == 4
        store.delete_messages(A, user_id="u2")
        store.put_messages(A, [msg("c")])
        assert store.get_messages(A, refs(["c"]))[0].seq > seqs[-1]  # type: ignore[union-attr,operator]


    def test_concurrent_writers_from_threads(self, store: RecordStore) -> None:
        def write(worker: int) -> None:
            for i in range(25):
                store.put_messages(A, [msg(f"w{worker}-{i}", user=f"u{worker}"), msg("shared", user="u9")])

        threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seqs = [m.seq for m in store.scan_messages(A)]
        assert len(seqs) == 101 and seqs == sorted(set(seqs))  # type: ignore[type-var]
        assert [store.count_messages(A, user_id=f"u{w}") for w in range(4)] == [25, 25, 25, 25]


    def test_get_messages_keeps_order_and_gives_none_for_missing(self, store: RecordStore) -> None:
        store.put_messages(A, [msg("m1"), msg("m2")])
        got = store.get_messages(A, refs(["m2", "nope", "m1", "m2"]))
        assert [m.message_id if m else None for m in got] == ["m2", None, "m1", "m2"]
        assert store.get_messages(A, []) == []
        original = msg("m3", metadata={"k": [1, "два"]}, topic_id="t1", reply_message_id="m1", is_mention_bot=True)
        store.put_messages(A, [original])
        back = store.get_messages(A, refs(["m3"]))[0]
        assert back is not None and back.model_dump(exclude={"seq"}) == original.model_dump(exclude={"seq"})


    def test_message_id_is_unique_per_chat_only(self, store: RecordStore) -> None:
        """Telegram numbers each chat's messages from 1: (chat_id, message_id) is the identity."""
        assert store.put_messages(A, [msg("42", user="u1", chat="cA", content="in A"), msg("42", user="u2", chat="cB", content="in B")]) == [True, True]
        assert store.put_messages(A, [msg("42", chat="cA", content="again"), msg("42", chat="cC")]) == [False, True]
        got = store.get_messages(A, [MessageRef("cB", "42"), ("cA", "42"), ("cD", "42")])
        assert [(m.chat_id, m.user_id, m.content) if m else None for m in got] == [("cB", "u2", "in B"), ("cA", "u1", "in A"), None]
        assert store.count_messages(A) == 3 and ids(store.scan_messages(A, chat_id="cB")) == ["42"]
        assert sorted(store.pending_index(A)) == [("cA", "42"), ("cB", "42"), ("cC", "42")]
        store.mark_indexed(A, [("cB", "42")])
        assert sorted(store.pending_index(A)) == [("cA", "42"), ("cC", "42")]
        b = store.get_messages(A, [("cB", "42")])[0]
        store.update_messages(A, [b.model_copy(update={"topic_id": "tB"})])  # type: ignore[union-attr]
        assert [m.topic_id for m in store.get_messages(A, refs(["42"], "cA") + refs(["42"], "cB"))] == [None, "tB"]  # type: ignore[union-attr]
        with pytest.raises(NotFoundError, match="cZ"):
            store.update_messages(A, [msg("42", chat="cZ")])
        assert store.delete_messages(A, user_id="u2") == [MessageRef("cB", "42")]
        assert store.get_messages(A, [("cA", "42"), ("cB", "42")])[0].content == "in A"  # type: ignore[union-attr]
        assert store.get_messages(A, [("cB", "42")]) == [None]


    def test_bare_message_ids_are_rejected(self, store: RecordStore) -> None:
        store.put_messages(A, [msg("m1")])
        for bad in (["m1"], [("s1",)], [("s1", "m1", "x")]):
            with pytest.raises(InvalidInputError, match="chat_id, message_id"):
                store.get_messages(A, bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError, match="chat_id, message_id"):
            store.mark_indexed(A, ["m1"])  # type: ignore[list-item]
        assert mids(store.pending_index(A)) == ["m1"]


    def test_window_is_the_last_messages_oldest_first(self, store: RecordStore) -> None:
        store.put_messages(A, [msg(f"m{i}", n=i) for i in range(15)])
        store.put_messages(A, [msg("other-session", session="s2"), msg("other-user", user="u2")])
        store.put_messages(A, [msg("m15", n=15)])
        window = store.window(A, user_id="u1", session_key="s1", limit=5)
        assert ids(window) == ["m11", "m12", "m13", "m14", "m15"]
        assert len(store.window(A, user_id="u1", session_key="s1", limit=100)) == 16
        assert store.window(A, user_id="u1", session_key="s1", limit=0) == []
        assert store.window(A, user_id="nobody", session_key="s1", limit=5) == []


    def test_chat_window_is_the_chats_last_messages_whoever_wrote_them(self, store: RecordStore) -> None:
        rows = [msg(f"m{i}", user=f"u{i % 3}", chat="g1", session="g1" if i % 5 else "thread", n=i) for i in range(30)]
        store.put_messages(A, rows + [msg("elsewhere", chat="g2", session="g1", n=31)])
        store.put_messages(B, [msg("other-tenant", chat="g1", session="g1", tenant=B, n=32)])
        assert ids(store.chat_window(A, chat_id="g1", limit=4)) == ["m26", "m27", "m28", "m29"]
        in_session = [m.message_id for m in rows if m.session_key == "g1"]
        assert ids(store.chat_window(A, chat_id="g1", session_key="g1", limit=6)) == in_session[-6:]
        assert ids(store.chat_window(A, chat_id="g1", session_key="thread", limit=100)) == [f"m{i}" for i in range(0, 30, 5)]
        assert store.chat_window(A, chat_id="g1", limit=0) == []
        assert store.chat_window(A, chat_id="nowhere", limit=5) == []
        assert ids(store.chat_window(B, chat_id="g1", limit=5)) == ["other-tenant"]


    def test_scan_filters_and_pages_by_after_seq(self, store: RecordStore) -> None:
        rows = [msg(f"m{i}", user=f"u{i % 2}", session=f"s{i % 3}", chat=f"c{i % 4}") for i in range(24)]
        store.put_messages(A, rows)
        everything = store.scan_messages(A)
        assert ids(everything) == [f"m{i}" for i in range(24)]
        assert [m.seq for m in everything] == sorted(m.seq for m in everything)  # type: ignore[type-var]
        for filters in ({"user_id": "u1"}, {"session_key": "s2"}, {"chat_id": "c3"}, {"user_id": "u0", "session_key": "s0"},
                        {"user_id": "u1", "chat_id": "c1"}, {"user_id": "u0", "session_key": "s0", "chat_id": "c2"}):
            expect = [m.message_id for m in rows if all(getattr(m, k) == v for k, v in filters.items())]
            assert ids(store.scan_messages(A, **filters)) == expect, filters
            pages, after = [], 0
            while page := store.scan_messages(A, **filters, after_seq=after, limit=2):
                pages.extend(page)
                after = page[-1].seq  # type: ignore[assignment]
            assert ids(pages) == expect, filters
        assert store.scan_messages(A, user_id="nobody") == []
        assert store.scan_messages(A, limit=0) == []


    def test_count_messages(self, store: RecordStore) -> None:
        store.put_messages(A, [msg("a"), msg("b"), msg("c", session="s2"), msg("d", user="u2")])
        assert store.count_messages(A) == 4
        assert store.count_messages(A, user_id="u1") == 3
        assert store.count_messages(A, user_id="u1", session_key="s2") == 1
        assert store.count_messages(A, user_id="nobody") == 0
        assert store.count_messages(B) == 0

    def test_count_messages_of_a_chat(self, store: RecordStore) -> None:
        batch = [msg("a", chat="g"), msg("b", chat="g", user="u2"), msg("c", chat="g", session="t"), msg("d", chat="h")]
        store.put_messages(A, batch)
        assert store.count_messages(A, chat_id="g") == 3
        assert store.count_messages(A, chat_id="g", session_key="s1") == 2
        assert store.count_messages(A, chat_id="g", user_id="u2") == 1
        assert store.count_messages(A, chat_id="g", after_seq=batch[1].seq) == 1
        assert store.count_messages(A, chat_id="g", session_key="s1", after_seq=batch[0].seq) == 1
        assert store.count_messages(A, chat_id="nowhere") == 0

    def test_count_messages_after_seq(self, store: RecordStore) -> None:
        """The topic tier's backlog: messages written after a cursor, with every filter."""
        batch = [msg("a"), msg("b"), msg("c", session="s2"), msg("d", user="u2")]
        store.put_messages(A, batch)
        after = batch[1].seq
        assert store.count_messages(A, after_seq=after) == 2
        assert store.count_messages(A, user_id="u1", after_seq=after) == 1
        assert store.count_messages(A, session_key="s2", after_seq=after) == 1
        assert store.count_messages(A, after_seq=batch[3].seq) == 0
        assert store.count_messages(B, after_seq=0) == 0


    def test_delete_removes_only_that_user_and_session(self, store: RecordStore) -> None:
        store.put_messages(A, [msg("a"), msg("b", session="s2"), msg("c", user="u2"), msg("d")])
        assert sorted(mids(store.delete_messages(A, user_id="u1", session_key="s1"))) == ["a", "d"]
        assert ids(store.scan_messages(A)) == ["b", "c"]
        assert store.window(A, user_id="u1", session_key="s1", limit=10) == []
        assert store.delete_messages(A, user_id="u1", session_key="s1") == []
        assert store.delete_messages(A, user_id="u1") == [MessageRef("s2", "b")]
        assert ids(store.scan_messages(A)) == ["c"]
        assert mids(store.pending_index(A)) == ["c"]
        assert store.get_messages(A, refs(["a", "b"])) == [None, None]
        assert store.put_messages(A, [msg("a")]) == [True]  # a deleted id can be stored again


    def test_update_messages_keeps_seq_and_moves_indexes(self, store: RecordStore) -> None:
        store.put_messages(A, [msg("a"), msg("b")])
        before = store.get_messages(A, refs(["a"]))[0]
        assert before is not None
        store.update_messages(A, [before.model_copy(update={"topic_id": "t9", "session_key": "s2"})])
        after = store.get_messages(A, refs(["a"]))[0]
        assert after is not None and after.topic_id == "t9" and after.seq == before.seq
        assert ids(store.window(A, user_id="u1", session_key="s2", limit=10)) == ["a"]
        assert ids(store.window(A, user_id="u1", session_key="s1", limit=10)) == ["b"]
        with pytest.raises(NotFoundError, match="nope"):
            store.update_messages(A, [msg("b", topic_id="t1"), msg("nope")])
        assert store.get_messages(A, refs(["b"]))[0].topic_id is None  # type: ignore[union-attr]


    def test_update_messages_reindex_makes_them_pending_again(self, store: RecordStore) -> None:
        """An edited text must be indexed again: the new text and the pending flag land in one atomic write."""
        store.put_messages(A, [msg("a"), msg("b"), msg("c")])
        store.mark_indexed(A, refs(["a", "b", "c"]))
        a = store.get_messages(A, refs(["a"]))[0]
        assert a is not None
        store.update_messages(A, [a.model_copy(update={"content": "edited text"})], reindex=True)
        assert mids(store.pending_index(A)) == ["a"] and store.count_pending(A) == 1
        again = store.get_messages(A, refs(["a"]))[0]
        assert again is not None and again.content == "edited text" and again.seq == a.seq
        store.update_messages(A, [msg("b", topic_id="t1")])  # without reindex: the flag stays as it was
        assert mids(store.pending_index(A)) == ["a"]
        with pytest.raises(NotFoundError, match="nope"):
            store.update_messages(A, [msg("c", content="changed"), msg("nope")], reindex=True)
        assert mids(store.pending_index(A)) == ["a"]  # nothing of the failed batch was written
        assert store.get_messages(A, refs(["c"]))[0].content == "text of c"  # type: ignore[union-attr]
        store.mark_indexed(A, refs(["a"]))
        assert store.pending_index(A) == [] and store.pending_index(B) == []


    def test_delete_refs_deletes_only_the_named_messages(self, store: RecordStore) -> None:
        """One message of a session goes (a platform's delete); the same id in another chat or tenant stays."""
        store.put_messages(A, [msg("a", n=1), msg("b", n=2), msg("c", n=3), msg("b", chat="c2", n=4), msg("d", user="u2", n=5)])
        store.put_messages(B, [msg("b", tenant=B)])
        store.mark_indexed(A, refs(["a"]))
        assert store.delete_refs(A, [("s1", "b"), ("s1", "nope"), ("s1", "b"), ("s1", "a")]) == [MessageRef("s1", "b"), MessageRef("s1", "a")]
        assert store.get_messages(A, [("s1", "a"), ("s1", "b"), ("c2", "b")])[:2] == [None, None]
        assert store.get_messages(A, [("c2", "b")])[0] is not None and store.get_messages(B, refs(["b"]))[0] is not None
        assert ids(store.window(A, user_id="u1", session_key="s1", limit=10)) == ["c", "b"]
        assert ids(store.scan_messages(A, user_id="u1")) == ["c", "b"] and ids(store.scan_messages(A, chat_id="s1")) == ["c", "d"]
        assert store.count_messages(A) == 3 and store.count_messages(A, user_id="u1", session_key="s1") == 2
        assert sorted(mids(store.pending_index(A))) == ["b", "c", "d"]  # b of chat c2
        assert store.delete_refs(A, []) == [] and store.delete_refs(A, [("s1", "a")]) == []
        with pytest.raises(InvalidInputError, match="chat_id, message_id"):
            store.delete_refs(A, ["c"])  # type: ignore[list-item]
        assert store.put_messages(A, [msg("a", content="again")]) == [True]  # a deleted id can be stored again
        assert store.get_messages(A, refs(["a"]))[0].content == "again"  # type: ignore[union-attr]


    def test_tenant_isolation_in_every_method(self, store: RecordStore) -> None:
        assert store.put_messages(A, [msg("m1", content="acme secret")]) == [True]
        assert store.put_messages(B, [msg("m1", content="globex text", tenant=B)]) == [True]
        store.put_messages(A, [msg("m2")])
        store.put_docs(A, "notes", {"k1": {"v": "acme"}})
        assert store.get_messages(B, refs(["m1", "m2"]))[0].content == "globex text"  # type: ignore[union-attr]
        assert store.get_messages(B, refs(["m2"])) == [None]
        assert {A, B} <= set(store.tenants())
        assert ids(store.window(B, user_id="u1", session_key="s1", limit=10)) == ["m1"]
        assert ids(store.scan_messages(B)) == ["m1"]
        assert store.count_messages(B) == 1
        assert mids(store.pending_index(B)) == ["m1"]
        store.mark_indexed(B, refs(["m1", "m2"]))
        assert mids(store.pending_index(A)) == ["m1", "m2"]
        assert store.mark_all_pending(B) == 1
        assert mids(store.delete_messages(B, user_id="u1")) == ["m1"]
        assert store.count_messages(A) == 2
        assert store.get_docs(B, "notes", ["k1"]) == [None]
        assert store.list_docs(B, "notes") == [] and store.count_docs(B, "notes") == 0
        assert store.delete_docs(B, "notes") == 0 and store.delete_docs(B, "notes", ["k1"]) == 0
        assert store.get_docs(A, "notes", ["k1"]) == [{"v": "acme"}]
        assert store.get_messages(A, refs(["m1"]))[0].tenant == A  # type: ignore[union-attr]


    def test_message_tenant_field_follows_the_store_tenant(self, store: RecordStore) -> None:
        store.put_messages(B, [msg("x", tenant=A)])
        assert store.get_messages(B, refs(["x"]))[0].tenant == B  # type: ignore[union-attr]
        assert store.get_messages(A, refs(["x"])) == [None]


    def test_bad_tenant_and_limit_are_rejected(self, store: RecordStore) -> None:
        with pytest.raises(InvalidInputError, match="tenant"):
            store.put_messages("bad tenant}", [msg("m1")])
        with pytest.raises(InvalidInputError, match="limit"):
            store.window(A, user_id="u1", session_key="s1", limit=-1)
        with pytest.raises(InvalidInputError, match="messages"):
            store.put_messages(A, [{"message_id": "m1"}])  # type: ignore[list-item]


    # -- pending for the index --------------------------------------------------------------------------
    def test_pending_index_and_mark_indexed(self, store: RecordStore) -> None:
        store.put_messages(A, [msg(f"m{i}") for i in range(5)])
        assert mids(store.pending_index(A)) == [f"m{i}" for i in range(5)]
        assert mids(store.pending_index(A, limit=2)) == ["m0", "m1"]
        store.mark_indexed(A, refs(["m1", "m3", "unknown"]))
        assert mids(store.pending_index(A)) == ["m0", "m2", "m4"]
        assert store.count_pending(A) == 3 and store.count_pending(B) == 0
        store.put_messages(A, [msg("m1")])  # a duplicate put does not re-queue
        store.update_messages(A, [msg("m3", topic_id="t1")])
        assert mids(store.pending_index(A)) == ["m0", "m2", "m4"]
        store.mark_indexed(A, [])
        assert store.mark_all_pending(A) == 5
        assert mids(store.pending_index(A)) == [f"m{i}" for i in range(5)]
        assert store.count_pending(A) == 5
        assert store.mark_all_pending(B) == 0


    # -- atomicity --------------------------------------------------------------------------------------
    def test_failed_message_batch_leaves_nothing(self, store: RecordStore) -> None:
        store.put_messages(A, [msg("keep")])
        bad = [msg("new1"), msg("new2", metadata={"obj": object()}), msg("new3")]
        with pytest.raises(InvalidInputError, match="new2"):
            store.put_messages(A, bad)
        assert store.get_messages(A, refs(["new1", "new2", "new3"])) == [None, None, None]
        assert store.count_messages(A) == 1 and mids(store.pending_index(A)) == ["keep"]
        assert store.put_messages(A, [msg("new1")]) == [True]
        assert store.get_messages(A, refs(["new1"]))[0].seq == 2  # type: ignore[union-attr]
        with pytest.raises(InvalidInputError):
            store.put_messages(B, [msg("b1", tenant=B), msg("b2", tenant=B, metadata={"obj": object()})])
        assert B not in store.tenants()
        with pytest.raises(InvalidInputError):
            store.update_messages(A, [msg("keep", topic_id="t1"), msg("new1", metadata={"obj": object()})])
        assert store.get_messages(A, refs(["keep"]))[0].topic_id is None  # type: ignore[union-attr]


    def test_failed_doc_batch_leaves_nothing(self, store: RecordStore) -> None:
        with pytest.raises(InvalidInputError, match="k2"):
            store.put_docs(A, "notes", {"k1": {"v": 1}, "k2": {"when": datetime.now(timezone.utc)}, "k3": {}})
        assert store.count_docs(A, "notes") == 0 and store.get_docs(A, "notes", ["k1"]) == [None]


    # -- documents --------------------------------------------------------------------------------------
    def test_docs_put_get_upsert(self, store: RecordStore) -> None:
        store.put_docs(A, "summaries", {"s1": {"text": "hello", "n": 1, "nested": {"a": [1, 2]}}, "s2": {"text": "x"}})
        store.put_docs(A, "summaries", {"s2": {"text": "y"}})
        store.put_docs(A, "summaries", {})
        assert store.get_docs(A, "summaries", ["s2", "missing", "s1"]) == [
            {"text": "y"}, None, {"text": "hello", "n": 1, "nested": {"a": [1, 2]}}
        ]
        assert store.get_docs(A, "other", ["s1"]) == [None]
        assert store.count_docs(A, "summaries") == 2


    def test_list_docs_order_prefix_after_limit(self, store: RecordStore) -> None:
        keys = ["user:2", "user:10", "user:1", "topic:a", "topic:b", "usera", "z", "ключ", "中文", "user:1:x"]
        store.put_docs(A, "c", {k: {"k": k} for k in keys})
        store.put_docs(A, "d", {"user:3": {}})
        assert [k for k, _ in store.list_docs(A, "c")] == sorted(keys)
        assert store.list_docs(A, "c", prefix="topic:")[1] == ("topic:b", {"k": "topic:b"})
        users = sorted(k for k in keys if k.startswith("user:"))
        assert [k for k, _ in store.list_docs(A, "c", prefix="user:")] == users
        assert [k for k, _ in store.list_docs(A, "c", prefix="user:", after="user:10")] == [k for k in users if k > "user:10"]
        assert [k for k, _ in store.list_docs(A, "c", prefix="user:", after="a")] == users
        assert store.list_docs(A, "c", prefix="user:", after="v") == []
        assert [k for k, _ in store.list_docs(A, "c", after="z")] == [k for k in sorted(keys) if k > "z"]
        assert [k for k, _ in store.list_docs(A, "c", limit=3)] == sorted(keys)[:3]
        assert store.list_docs(A, "c", limit=0) == []
        assert [k for k, _ in store.list_docs(A, "c", prefix="中")] == ["中文"]
        assert store.count_docs(A, "c", prefix="user:") == len(users)
        assert store.count_docs(A, "c", prefix="nothing") == 0
        pages, after = [], ""
        while page := store.list_docs(A, "c", after=after, limit=4):
            pages.extend(k for k, _ in page)
            after = page[-1][0]
        assert pages == sorted(keys)


    def test_delete_docs(self, store: RecordStore) -> None:
        store.put_docs(A, "c", {k: {} for k in ("a", "b", "c")})
        store.put_docs(A, "keep", {"a": {}})
        assert store.delete_docs(A, "c", ["a", "missing", "a"]) == 1
        assert [k for k, _ in store.list_docs(A, "c")] == ["b", "c"]
        assert store.delete_docs(A, "c", []) == 0
        assert store.delete_docs(A, "c") == 2
        assert store.count_docs(A, "c") == 0 and store.list_docs(A, "c") == []
        assert store.count_docs(A, "keep") == 1
        store.put_docs(A, "c", {"a": {"again": True}})
        assert store.list_docs(A, "c") == [("a", {"again": True})]


    # -- content ----------------------------------------------------------------------------------------
    def test_unicode_content_round_trips(self, store: RecordStore) -> None:
        texts = ["Привет, как дела? Ёлка", "你好，世界。记忆层", "emoji 🎉🚀 👩‍💻 and \u200b zero width", "mixed: Hi Привет 你好 😀"]
        store.put_messages(A, [msg(f"m{i}", content=t, user_name="Дмитрий 李") for i, t in enumerate(texts)])
        assert [m.content for m in store.scan_messages(A)] == texts
        assert store.window(A, user_id="u1", session_key="s1", limit=1)[0].user_name == "Дмитрий 李"
        store.put_docs(A, "profiles", {"ключ-🎉": {"имя": "Аня", "城市": "北京", "mood": "😀"}})
        assert store.list_docs(A, "profiles", prefix="ключ") == [("ключ-🎉", {"имя": "Аня", "城市": "北京", "mood": "😀"})]


    # -- reopen -----------------------------------------------------------------------------------------
    def test_reopen_keeps_everything(self, opener: Opener | None) -> None:
        if opener is None:
            pytest.skip("the `opener` fixture returns None: this storage cannot be reopened")
        first = opener()
        first.setup()
        first.put_messages(A, [msg("m1"), msg("m2", content="Привет 你好 🎉")])
        first.mark_indexed(A, refs(["m1"]))
        first.put_docs(A, "c", {"k": {"v": 1}})
        first.close()
        second = opener()
        second.setup()
        self._opened.append(second)
        assert ids(second.scan_messages(A)) == ["m1", "m2"]
        assert second.get_messages(A, refs(["m2"]))[0].content == "Привет 你好 🎉"  # type: ignore[union-attr]
        assert mids(second.pending_index(A)) == ["m2"]
        assert second.list_docs(A, "c") == [("k", {"v": 1})]
        assert A in second.tenants()
        assert second.put_messages(A, [msg("m3")]) == [True]
        assert second.get_messages(A, refs(["m3"]))[0].seq == 3  # type: ignore[union-attr]

    # -- the shared recent cache --------------------------------------------------------------------
    def test_recent_cache_is_none_or_a_working_cache(self, store: RecordStore, opener: Opener | None) -> None:
        cache = store.recent_cache(size=3, ttl=60)
        if cache is None:
            return  # the topic tier then keeps one in process
        assert isinstance(cache, RecentCache)
        if getattr(cache, "store", None) is store:  # the record store is the cache: what is stored is cached
            store.put_messages(A, [msg(f"m{i}", chat="c1", n=i) for i in range(5)])
            store.put_messages(B, [msg("m9", chat="c1", tenant=B)])
            cache.push(A, [msg("m7", chat="c1", n=7)])  # nothing to do: the record write was the push
            assert ids(cache.recent(A, "c1", 3)) == ["m2", "m3", "m4"]
            got = cache.get(A, refs(["m4", "nope", "m9"], "c1"))
            assert [m.message_id if m else None for m in got] == ["m4", None, None]
            store.update_messages(A, [msg("m4", chat="c1", n=4, topic_id="t-1")])
            assert cache.get(A, refs(["m4"], "c1"))[0].topic_id == "t-1"  # type: ignore[union-attr]
            assert ids(cache.recent(B, "c1", 10)) == ["m9"]
            store.delete_refs(A, refs(["m4"], "c1"))
            cache.discard(A, refs(["m4"], "c1"))
            assert cache.get(A, refs(["m4"], "c1")) == [None] and ids(cache.recent(A, "c1", 3)) == ["m1", "m2", "m3"]
            return
        cache.push(A, [msg(f"m{i}", chat="c1", n=i) for i in range(5)])
        cache.push(B, [msg("m9", chat="c1", tenant=B)])
        assert ids(cache.recent(A, "c1", 10)) == ["m2", "m3", "m4"]
        assert ids(cache.recent(A, "c1", 2)) == ["m3", "m4"]
        got = cache.get(A, refs(["m4", "nope", "m9"], "c1"))  # (a message trimmed from its chat may live until its TTL)
        assert [m.message_id if m else None for m in got] == ["m4", None, None]
        cache.push(A, [msg("m4", chat="c1", n=4, topic_id="t-1")])  # refreshed in place
        assert cache.get(A, refs(["m4"], "c1"))[0].topic_id == "t-1"  # type: ignore[union-attr]
        if opener is not None:  # shared: another handle on the same storage sees it
            other = opener()
            self._opened.append(other)
            other_cache = other.recent_cache(size=3, ttl=60)
            assert other_cache is not None and ids(other_cache.recent(A, "c1", 10)) == ["m2", "m3", "m4"]
        cache.discard(A, refs(["m4", "m3", "never-cached"], "c1"))  # a deleted message: no read may find it
        cache.discard(A, [])
        assert cache.get(A, refs(["m4", "m3"], "c1")) == [None, None] and ids(cache.recent(A, "c1", 10)) == ["m2"]
        assert ids(cache.recent(B, "c1", 10)) == ["m9"]
        cache.clear(A)
        assert cache.recent(A, "c1", 10) == [] and ids(cache.recent(B, "c1", 10)) == ["m9"]
        cache.clear(B)
