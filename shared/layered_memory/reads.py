"""What one handle reads of the message log: a user's sessions, stored messages by ref, one session,
and the message search (the facade delegates here; the context is ``context/``).

    reads = MessageReads(core, scope)          # what LayeredMemory builds on first use
    reads.search("docker install", filters={"session_key": "s1"}, k=5)

Every read asks the scope who it acts on (``scope.user``) and what it may see: a bound handle sees its
user's own messages and every message of the chats its user is a member of (``ChatRegistry.view``,
resolved per call), never another user's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import InvalidInputError
from .models import Message, MessageRef, SearchResult, check_id, check_refs
from .retrieval.plan import SearchPlan, plan_search

if TYPE_CHECKING:
    from .index import Scope
    from .kernel import Kernel


class MessageReads:
    """The message reads of one handle (``scope``: its tenant and bound user)."""

    def __init__(self, core: Kernel, scope: Scope) -> None:
        self.core = core
        self.scope = scope
        self.tenant_id = scope.tenant

    def _view(self) -> Scope:
        """This handle's scope with its user's member chats as they are now (what a call may see)."""
        return self.core.chats.view(self.scope)

    def list_sessions(self, user_id: str | None, *, limit: int = 1000) -> list[str]:
        """The session keys a user has written in (sorted)."""
        return self.core.sessions.keys(self.tenant_id, self.scope.user(user_id), limit=limit)

    def get_messages(
        self, messages: Sequence[MessageRef | tuple[str, str]] | Sequence[str], *, chat_id: str | None = None
    ) -> list[Message | None]:
        """Stored messages, in order (None where missing or not visible to this handle).

        A message_id is unique only within its chat, so name messages by ``(chat_id, message_id)``
        refs, or by ids with ``chat_id=``::

            mem.get_messages([("c1", "m1"), ("c2", "m1")])
            mem.get_messages(["m1", "m2"], chat_id="c1")

        Raises:
            InvalidInputError: a bare message_id without ``chat_id``, or an invalid id.
        """
        if chat_id is not None:
            check_id("chat_id", chat_id)
            if isinstance(messages, str) or not isinstance(messages, Iterable):
                raise InvalidInputError("message_ids", messages, "must be a list of message ids", 'pass e.g. ["m1", "m2"]')
            refs = check_refs("message_ids", [(chat_id, m) for m in messages])
        else:
            refs = check_refs("messages", messages)
        out = self.core.records.get_messages(self.tenant_id, refs)
        if self.scope.bound_user:
            view = self._view()
            out = [m if m is not None and view.sees(m) else None for m in out]
        return out

    def get_session_messages(self, user_id: str | None, session_id: str, *, limit: int | None = None) -> list[Message]:
        """One session as ``user_id`` sees it, oldest first (the last ``limit`` when given): their own
        messages, and in the chats they are a member of every message of the session (the other
        members', the bot's)."""
        user_id = self.scope.user(user_id)
        session_id = check_id("session_id", session_id)  # type: ignore[assignment]
        if limit is not None:
            return self.core.chats.window(self.tenant_id, user_id, session_id, limit)
        return self.core.chats.session_messages(self.tenant_id, user_id, session_id)

    def plan_search(self, queries: str | Sequence[str] | None, *, filters: Mapping[str, Any] | None = None, k: int = 10, route: str = "hybrid",
                    group_by: str | None = None) -> SearchPlan:
        """Validate and plan a search without running it (see ``search``)."""
        if filters is not None and not isinstance(filters, Mapping):
            raise InvalidInputError("filters", filters, "must be an object", "pass a dict of filter names to values")
        filters = {"kind": "message", **(filters or {})}  # messages unless asked (topic summaries, items share the collection)
        return plan_search(
            self._view().spec(), queries, filters=filters, k=k, route=route,
            max_query_chars=self.core.settings.retrieval.max_query_chars, group_by=group_by,
        )

    def search(self, queries: str | Sequence[str] | None = None, filters: Mapping[str, Any] | None = None, k: int = 10, route: str = "hybrid", *,
               query: str | None = None, group_by: str | None = None) -> SearchResult:
        """Hybrid (BM25 + dense, RRF), bm25 or dense search over this tenant's messages (seed 003).

        Args:
            queries: one query or a list (normalized, deduplicated); ``query=`` is an alias.
            filters: role, session_key, user_id, chat_id, timestamp_from/to, channel, author, lang,
                kind, topic_id, task_id, interaction_type, success. Applied inside the index.
            k: 1..100 hits. route: "hybrid" | "bm25" | "dense".
            group_by: "session": ``k`` sessions ranked as units in ``result.groups`` (``hits``: each one's best hit).

        Returns:
            SearchResult with hits (id, score, text, snippet, meta), total_found, route_used
            ("bm25" when the embedder failed or is missing; ``fallback_reason`` says why) and timings.
        """
        if query is not None:
            if not isinstance(query, str):
                raise InvalidInputError("query", query, "must be a string", "pass the query text")
            if queries is not None and not isinstance(queries, (str, list, tuple)):
                raise InvalidInputError("queries", queries, "must be a string or a list of strings", "pass e.g. ['docker install']")
            queries = [query] if queries is None else ([queries] if isinstance(queries, str) else list(queries)) + [query]
        plan = self.plan_search(queries, filters=filters, k=k, route=route, group_by=group_by)
        return self.core.searcher.execute(plan, self.tenant_id)


__all__ = ["MessageReads"]
