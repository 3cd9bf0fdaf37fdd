"""Memory sources: what each tier offers a context, behind one signature.

    class Calendar:                                   # a source of your own
        name = "calendar"
        def candidates(self, recall: Recall) -> list[Candidate]:
            return [Candidate(MemoryLine("Dentist on Friday 10:00", "cal:1", None, "calendar"), "memory", "fact", 0.5)]

    build_context(core, handle, "u1", "s1", "when is my dentist?", True, 2000, sources=[*default_sources(), Calendar()])

A source reads what ``Recall`` carries (the question and its embedding, who asks and what they may see,
the window, the budget) and returns ``ranking.Candidate`` lines; the assembly ranks every source's lines
on one value scale, drops what is under the relevance floor or repeats a chosen line, and fills the
budget (``assemble``). Sources run in order and do not see each other's lines; a source fails soft (a
warning, no lines: a broken tier never breaks the prompt) unless it says ``required = True``, as the
message search does.

The default sources (``default_sources``): the message search (this session's older messages, the other
sessions' messages, the turn after the best hits), topic summaries, the user's profile and facts, and
documents when the caller asks for them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..retrieval.plan import aligned_vectors, plan_search
from .candidates import document_candidates, fact_candidates, message_candidates, message_key, read_your_writes, topic_candidates
from .ranking import Candidate, terms_of

if TYPE_CHECKING:
    from ..index import Scope
    from ..kernel import Kernel
    from ..models import Message

logger = logging.getLogger(__name__)

MAX_SEARCH_K = 100
MIN_SEARCH_K = 20
# Hits per token of budget: 2,000 tokens read 50 hits, 4,000 the most, 100. Measured on LoCoMo
# (docs/context.md): at 2,000 tokens 100 hits put 0.863 of the evidence in the prompt, 57 and 40 hits
# 0.856 each; at 4,000, 80 hits 0.896 where 100 read 0.905 and fill the budget (before the deep tail
# below). Fewer hits are faster (``context.search_depth=40`` for a bot that needs the milliseconds; the
# latency per depth is in docs/context.md).
LINE_TOKENS = 40
# The context's search reads a deep tail (``retrieval.deep_limit`` for this search): each side is read
# POOL_PER_HIT candidates deep per hit asked, and the hits below the first ``retrieval.deep_from`` are
# ranked from those deeper lists while the first stay the search's usual ranking. A context reads the
# search's deep tail (its top 50 at 2,000 tokens), and evidence sits further down each side's list than
# the usual 50 (docs/context.md). 1.5 (75 a side at 2,000 tokens) against 2: LoCoMo evidence in the
# prompt -0.1 point at 2,000 tokens, -0.2 at 4,000, equal at 1,000, the synthetic sets equal; 1.7 ms
# less at P95 (the lists' points are most of the search's cost). 1.2: -0.4 point at 2,000.
POOL_PER_HIT = 1.5


@dataclass(slots=True)
class Recall:
    """What every source reads: ``texts`` are the queries (the first is the question; a running task's
    latest tool results follow) and ``vectors`` their embeddings; ``view`` is what ``user_id`` may see
    (``window.visible_scope``); ``handle`` is the facade handle the call came through (its public
    methods only); ``budget`` the tokens the context may fill."""

    core: Kernel
    handle: Any
    user_id: str
    session_id: str
    view: Scope
    texts: list[str]
    vectors: list[Any]
    window: Sequence[Message]
    budget: int
    cosines: dict[str, float] = field(default_factory=dict)  # the message search's exact dense scores, per point id

    @property
    def question(self) -> str:
        return self.texts[0]


@runtime_checkable
class MemorySource(Protocol):
    """One tier's offer to the context: ``candidates(recall)`` returns the lines it proposes."""

    name: str

    def candidates(self, recall: Recall) -> list[Candidate]: ...


def search_depth(core: Kernel, budget: int) -> int:
    """How many hits the message search returns: ``context.search_depth`` when set, else one per
    ``LINE_TOKENS`` tokens of budget, at least ``MIN_SEARCH_K``, at most ``MAX_SEARCH_K``;
    never more than the two blocks' caps (``memory.relevant_memory_k`` + ``memory.conversation_memory_k``)."""
    cfg = core.settings.memory
    wanted = core.settings.context.search_depth or min(MAX_SEARCH_K, max(MIN_SEARCH_K, budget // LINE_TOKENS))
    return max(1, min(wanted, cfg.relevant_memory_k + cfg.conversation_memory_k))


class MessageSource:
    """One message search over everything the user may see, the window left out inside the index (the
    messages the writer has not embedded yet indexed first: read-your-writes), its hits valued by rank and
    the turn after the best of them (``candidates.message_candidates``)."""

    name = "messages"
    required = True  # the context cannot stand without it: its errors reach the caller

    def candidates(self, recall: Recall) -> list[Candidate]:
        core = recall.core
        plan = plan_search(recall.view.spec(), recall.texts, filters={"kind": "message"}, k=search_depth(core, recall.budget),
                           max_query_chars=core.settings.retrieval.max_query_chars)
        read_your_writes(core, recall.view.tenant, plan, core.settings.context.read_your_writes)
        # one query: its dense scores are the relevance floor's cosines (several: the floor takes the best
        # query per point, which the search's per-query lists do not say for every point)
        cosines = recall.cosines if len(recall.texts) == 1 else None
        point_ids: list[str] = []
        res = core.searcher.execute(plan, recall.view.tenant, exclude_ids=[m.ref for m in recall.window],
                                    query_vectors=aligned_vectors(plan, recall.texts, recall.vectors), snippets=False, cosines=cosines,
                                    pool=int(POOL_PER_HIT * plan.k), point_ids=point_ids)
        query_terms = frozenset(t for text in recall.texts for t in terms_of(core.analyzer, text))
        window_keys = {message_key(m) for m in recall.window}
        return message_candidates(core, recall.view, recall.session_id, res.hits, window_keys, query_terms=query_terms,
                                  point_ids=point_ids if len(point_ids) == len(res.hits) else None)


class TopicSource:
    """The topic summaries closest to the question that the user sees (``candidates.topic_candidates``)."""

    name = "topics"

    def candidates(self, recall: Recall) -> list[Candidate]:
        return topic_candidates(recall.core, recall.view, recall.question, recall.vectors[0])


class FactSource:
    """The user's profile and preferences, and the entities closest to the question (``candidates.fact_candidates``)."""

    name = "facts"

    def candidates(self, recall: Recall) -> list[Candidate]:
        return fact_candidates(recall.core, recall.handle.scope, recall.user_id, recall.question, recall.vectors[0])


class DocumentSource:
    """The document chunks the user may see closest to the question (``candidates.document_candidates``)."""

    name = "documents"

    def candidates(self, recall: Recall) -> list[Candidate]:
        return document_candidates(recall.core, recall.handle.for_user(recall.user_id).documents, recall.question)


def default_sources(with_docs: bool = False) -> list[MemorySource]:
    """The sources ``get_context_for_user`` reads, in order; documents only when asked."""
    out: list[MemorySource] = [MessageSource(), TopicSource(), FactSource()]
    return out + [DocumentSource()] if with_docs else out


def gather(sources: Sequence[MemorySource], recall: Recall) -> list[Candidate]:
    """Every source's candidates, in source order. A ``required`` source's errors reach the caller (the
    message search: the context cannot stand without it); another source that fails is logged and gives nothing."""
    out: list[Candidate] = []
    for source in sources:
        if getattr(source, "required", False):
            out += source.candidates(recall)
            continue
        try:
            out += source.candidates(recall)
        except Exception as exc:
            logger.warning("memory source %r failed (%s: %s); the context goes on without it", getattr(source, "name", source),
                           type(exc).__name__, exc)
    return out


__all__ = ["DocumentSource", "FactSource", "MemorySource", "MessageSource", "Recall", "TopicSource", "default_sources", "gather",
           "search_depth"]
