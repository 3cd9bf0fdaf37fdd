"""``get_context_for_user`` fills its budget with the evidence (issue 28): the budget is a target and a
ceiling (tiktoken), the seed 002 order holds, no block repeats another, a fact and the message it came
from are not both shown, low-content turns only as neighbours of a hit, nothing under the relevance
floor, every line says who and when, and ``print(ctx)`` shows what the model reads."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from layered_memory import Context, LayeredMemory
from layered_memory.context import MemoryLine, assemble, context_tokens
from layered_memory.context.build import recall
from layered_memory.context.ranking import Candidate
from layered_memory.models import Message
from layered_memory.providers.local import USEEmbedder
from layered_memory.session_summaries import summary_units

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
ORDER = ["summary", "user_data", "window", "memory", "conversation_memory", "documents"]
FILLER = [
    "The weather keeps flipping between rain and sun this week.", "Work kept me late almost every day, honestly.",
    "We watched a documentary about whales on Sunday evening.", "My phone battery dies before lunch these days.",
    "There is a new cafe on our street with loud music.", "I finally cleaned the whole flat on Saturday morning.",
    "The traffic this morning was unbelievable near the bridge.", "I keep forgetting to reply to my messages.",
]
ANSWER = "My flight to Lisbon leaves on May 14 at 07:40, seat 22A, terminal 2."
QUESTION = "When does my flight to Lisbon leave?"


@pytest.fixture(scope="module")
def embedder():
    return USEEmbedder()


def turn(i: int, text: str, role: str = "user", *, user: str = "u1", session: str = "s1", name: str = "Anna") -> dict:
    return {"message_id": f"m{i}", "chat_id": session, "session_key": session, "user_id": user, "user_name": name if role == "user" else "",
            "role": role, "content": text, "create_time": T0 + timedelta(minutes=i)}


def long_chat(n: int = 80) -> list[dict]:
    """A long chat whose one answer-bearing turn is early (far outside the window)."""
    out = []
    for i in range(n):
        if i == 6:
            out.append(turn(i, ANSWER))
        elif i % 2:
            out.append(turn(i, f"{FILLER[i % len(FILLER)]} ({i})", "assistant"))
        else:
            out.append(turn(i, f"{FILLER[(i // 2) % len(FILLER)]} Anyway, {i} more things to do."))
    return out


@pytest.fixture
def mem(tmp_path, embedder):
    m = LayeredMemory.embedded(tmp_path, embedder=embedder)
    m.add_messages(long_chat())
    m.add_messages([turn(200, "I booked the Lisbon hotel near the river for May 14 to May 20.", session="s2"),
                    turn(201, "Noted.", "assistant", session="s2")])
    m.set_user_data("u1", {"name": "Anna"})
    m.flush()
    yield m
    m.close()


def blocks(ctx) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in ctx:
        if m.kind in ("memory", "conversation_memory", "documents"):
            out[m.kind] = [ln[2:] for ln in m.content.split("\n")[1:]]
    return out


def test_answer_bearing_turn_is_in_the_prompt_at_500_tokens(mem):
    ctx = mem.get_context_for_user("u1", "s1", query=QUESTION, max_tokens=500)
    assert ctx.tokens <= 500 and context_tokens(ctx, mem.count_tokens) == ctx.tokens
    assert ANSWER in ctx.text  # 74 turns back, outside the window of 10


def test_context_grows_with_max_tokens_and_never_exceeds_it(mem):
    used = []
    for budget in (60, 120, 250, 500, 1000, 2000, 4000):
        ctx = mem.get_context_for_user("u1", "s1", query=QUESTION, max_tokens=budget)
        assert ctx.tokens == context_tokens(ctx, mem.count_tokens) <= budget, budget
        used.append(ctx.tokens)
    assert used == sorted(used) and used[3] > used[1]  # a target, not a ceiling: more budget, more context


def test_seed_002_order_and_no_block_repeats_another(mem):
    mem.add_messages([turn(100 + i, t) for i, t in enumerate(FILLER)])  # past the summary threshold again
    ctx = mem.get_context_for_user("u1", "s1", query="Lisbon flight and hotel", max_tokens=4000)
    kinds = [m.kind for m in ctx]
    assert kinds == sorted(kinds, key=ORDER.index) and kinds.count("summary") <= 1
    assert {"summary", "user_data", "window", "memory", "conversation_memory"} <= set(kinds)
    window = [m.content for m in ctx if m.kind == "window"]
    lines = blocks(ctx)
    memory_texts = [ln.split(": ", 1)[1] for b in lines.values() for ln in b]
    assert len(memory_texts) == len(set(memory_texts))  # no line twice
    assert not set(memory_texts) & set(window)  # the recalled blocks never repeat the window
    summary = next(m.content for m in ctx if m.kind == "summary")
    for text in [*memory_texts, *window]:  # nor does the summary repeat a shown message
        assert text.rstrip(".") not in summary


def test_every_line_says_who_and_when_and_print_shows_the_prompt(mem, capsys):
    ctx = mem.get_context_for_user("u1", "s1", query=QUESTION)
    assert isinstance(ctx, Context) and ctx.max_tokens == 2000  # context.max_tokens fills when None is passed
    assert f"- [2024-05-01 09:06] Anna: {ANSWER}" in ctx.text
    conv = blocks(ctx)["conversation_memory"]
    assert conv[0].startswith("[2024-05-01 12:20] Anna: I booked the Lisbon hotel")
    print(ctx)
    out = capsys.readouterr().out
    assert out == ctx.text + "\n" and "[2024-05-01 10:18] Anna:" in out  # the window's turns as lines too


def test_low_content_turns_only_as_neighbours_of_a_hit(mem):
    ctx = mem.get_context_for_user("u1", "s1", query="Lisbon hotel by the river", max_tokens=4000)
    conv = blocks(ctx)["conversation_memory"]
    assert conv[0].endswith("May 14 to May 20.") and conv[1] == "[12:21] assistant: Noted."  # the reply after the hit
    window = mem.get_session_messages("u1", "s1", limit=mem.settings.memory.short_term_window)
    noted = [c for c in recall(mem._core, mem, "u1", "s1", ["Lisbon hotel by the river"], window, False, 4000) if c.item.text == "Noted."]
    assert [c.kind for c in noted] == ["neighbour"] and noted[0].parent.item.text.startswith("I booked the Lisbon hotel")
    assert noted[0].value < noted[0].parent.value / 10  # found by its index entry (the turn before it), not a hit


def test_off_topic_question_gets_no_recalled_lines(mem):
    ctx = mem.get_context_for_user("u1", "s1", query="How do I rotate the Kubernetes service account token?", max_tokens=4000)
    assert not blocks(ctx)  # an empty block beats a wrong one
    cfg = mem.settings.context
    saved = (cfg.relevance_floor, cfg.relevance_gate)
    cfg.relevance_floor = cfg.relevance_gate = 0.0  # without floor and gate the same question fills the blocks with noise
    try:
        assert blocks(mem.get_context_for_user("u1", "s1", query="How do I rotate the Kubernetes service account token?"))
    finally:
        cfg.relevance_floor, cfg.relevance_gate = saved


def test_session_summary_is_sentences_not_a_transcript(mem):
    mem.add_messages([turn(300, "Use a cache, e.g. Redis, in front of the billing API."), turn(301, "ok", "assistant"),
                      turn(302, "Noted.", "assistant"), *[turn(303 + i, t) for i, t in enumerate(FILLER * 3)]])
    summary = mem.refresh_summary("u1", "s1", force=True)
    units = summary_units(summary)
    assert all(text[-1] in ".!?…" for _, text in units)  # whole sentences
    assert all(len(text.split()) >= 3 for _, text in units)  # no "ok", no "Noted."
    named = [who for who, _ in units if who]
    assert all(a != b for a, b in zip(named, named[1:]))  # a speaker is named where the speaker changes
    assert not any(text.endswith("e.g.") for _, text in units)


def message(i: int, text: str) -> Message:
    return Message.build(turn(i, text))


def cand(key: str, text: str, value: float, *, kind: str = "message", sources: tuple[str, ...] = (), rel: float = 1.0) -> Candidate:
    return Candidate(MemoryLine(text, key, T0, "Anna", sources=sources), "memory", kind, value, relevance=rel,
                     term_set=frozenset(text.lower().split()))


def test_a_fact_and_the_message_it_came_from_are_not_both_included():
    count = lambda s: len(s.split())  # noqa: E731
    window = [message(50, "and what did I say about the hotel?")]
    msg = cand("s1|m3", "I booked the river hotel for May", 1.0)
    fact = cand("kg:e1", "Anna (PERSON): booked the river hotel", 0.5, kind="fact", sources=("s1|m3",))
    other = cand("s1|m9", "the museum opens at ten on Mondays", 0.4)
    for order in ([msg, fact, other], [fact, msg, other]):
        out = assemble(summary=None, user_data=None, window=window, candidates=order, max_tokens=400, count=count)
        text = next(m.content for m in out if m.kind == "memory")
        assert ("river hotel for May" in text) != ("booked the river hotel" in text.replace("hotel for May", ""))
        assert "museum" in text
    low = cand("s1|m10", "the museum is closed on Tuesdays", 0.9, rel=0.05)  # under the floor: never shown
    out = assemble(summary=None, user_data=None, window=window, candidates=[low], max_tokens=400, count=count, floor=0.2)
    assert [m.kind for m in out] == ["window"]


class _Calendar:
    """A memory source of a user's own: one line, valued like a fact."""

    name = "calendar"

    def __init__(self, when: datetime = T0) -> None:
        self.seen = []
        self.when = when

    def candidates(self, recall):
        self.seen.append((recall.user_id, recall.session_id, recall.question, len(recall.vectors[0]), recall.budget))
        line = MemoryLine("Dentist appointment on Friday at 10:00 about the Lisbon flight checkup", "cal:1", self.when, "calendar")
        return [Candidate(line, "memory", "fact", 0.5)]


class _Broken:
    name = "broken"

    def candidates(self, recall):
        raise RuntimeError("calendar service down")


def test_a_memory_source_of_your_own_plugs_into_the_one_ranking(mem):
    from layered_memory.context import build_context
    from layered_memory.context.sources import MemorySource, default_sources

    cal = _Calendar()
    assert isinstance(cal, MemorySource) and [s.name for s in default_sources(True)] == ["messages", "topics", "facts", "documents"]
    ctx = build_context(mem._core, mem, "u1", "s1", QUESTION, True, 2000, sources=[*default_sources(), cal])
    assert cal.seen == [("u1", "s1", QUESTION, len(mem._core.embedder.embed_query("x")), 2000)]
    assert "- [2024-05-01 09:00] calendar: Dentist appointment on Friday" in ctx.text  # ranked with the tiers' lines
    assert ANSWER in ctx.text and ctx.tokens <= 2000
    only = build_context(mem._core, mem, "u1", "s1", QUESTION, True, 2000, sources=[cal])
    assert ANSWER not in only.text and "Dentist appointment" in only.text  # the list decides what is recalled


def test_a_memory_source_may_give_a_naive_time(mem):
    """A naive ``datetime`` from a source of the caller's is UTC, beside the messages' aware times (it was a
    ``TypeError`` when the block was sorted)."""
    from layered_memory.context import build_context
    from layered_memory.context.sources import default_sources

    ctx = build_context(mem._core, mem, "u1", "s1", QUESTION, True, 2000, sources=[*default_sources(), _Calendar(T0.replace(tzinfo=None))])
    assert "calendar: Dentist appointment on Friday" in ctx.text and ANSWER in ctx.text


def test_a_failing_memory_source_leaves_the_others_standing(mem, caplog):
    from layered_memory.context import build_context
    from layered_memory.context.sources import default_sources

    ctx = build_context(mem._core, mem, "u1", "s1", QUESTION, True, 2000, sources=[_Broken(), *default_sources()])
    assert ANSWER in ctx.text
    assert "memory source 'broken' failed (RuntimeError: calendar service down)" in caplog.text


def test_relevance_from_the_search_scores_equals_asking_the_index(mem, monkeypatch):
    """The message search hands its exact dense scores to the relevance floor, those of every hit it returns
    (read with their payloads in one query of the ``mean`` vector), so the floor asks the index nothing more:
    every candidate's relevance is the same as when the index is asked for all of them."""
    import layered_memory.context.build as build

    window = mem.get_session_messages("u1", "s1", limit=mem.settings.memory.short_term_window)
    asked: list[int] = []
    real = build._dense

    def spy(core, ids, vectors, known=None):
        asked.append(len([i for i in dict.fromkeys(ids) if i not in (known or {})]))
        return real(core, ids, vectors, known)

    for q in (QUESTION, "Lisbon hotel by the river", "whales documentary", "How do I rotate the Kubernetes token?"):
        monkeypatch.setattr(build, "_dense", spy)
        fast = {c.key: c.relevance for c in recall(mem._core, mem, "u1", "s1", [q], window, False, 2000)}
        monkeypatch.setattr(build, "_dense", lambda core, ids, vectors, known=None: real(core, ids, vectors, None))
        slow = {c.key: c.relevance for c in recall(mem._core, mem, "u1", "s1", [q], window, False, 2000)}
        assert fast.keys() == slow.keys() and all(abs(fast[k] - slow[k]) < 1e-6 for k in fast), q
    assert len(fast) > 10 and asked and max(asked) == 0  # all came from the search itself


def test_recalled_messages_are_keyed_by_their_index_points(mem):
    """The message search hands the context each hit's point id (no id derived again per hit): it is the
    point the relevance floor reads, the one the message's own chat and id name."""
    from layered_memory.index.points import message_point_id
    from layered_memory.models import MessageRef

    window = mem.get_session_messages("u1", "s1", limit=mem.settings.memory.short_term_window)
    cands = [c for c in recall(mem._core, mem, "u1", "s1", [QUESTION], window, False, 2000) if c.kind == "message"]
    assert len(cands) > 10
    for c in cands:
        chat, mid = c.key.split("|", 1)
        assert c.vector_id == message_point_id(mem.tenant_id, MessageRef(chat, mid))


def test_search_depth_setting_bounds_the_message_search(mem):
    """``context.search_depth`` is how many hits the recalled blocks read; unset, the budget decides."""
    from layered_memory.context.sources import search_depth

    core = mem._core
    assert [search_depth(core, b) for b in (60, 500, 2000, 4000)] == [20, 20, 50, 100]
    mem.settings.context.search_depth = 3
    try:
        assert search_depth(core, 4000) == 3
        ctx = mem.get_context_for_user("u1", "s1", query=QUESTION, max_tokens=4000)
        assert sum(m.content.count("\n- ") for m in ctx if m.kind in ("memory", "conversation_memory")) <= 3 + 3  # hits + their next turns
    finally:
        mem.settings.context.search_depth = None


def test_the_message_search_reads_a_deep_tail_of_one_and_a_half_per_hit(mem, monkeypatch):
    """The context packs the search's deep tail (50 hits at 2,000 tokens), so its search reads each side 1.5
    candidates deep per hit asked (``sources.POOL_PER_HIT``), where ``mem.search`` reads ``retrieval.prefetch_limit``; a context that
    asks for no more than ``retrieval.deep_from`` hits reads the usual depth."""
    index = mem._core.index
    real = index.query_batch
    reads: list[list[int]] = []

    def spy(name, requests):
        reads.append([q.limit for q in requests])
        return real(name, requests)

    monkeypatch.setattr(index, "query_batch", spy)
    mem.get_context_for_user("u1", "s1", query=QUESTION, max_tokens=2000)
    assert [75, 75] in reads  # the dense side (the mean vector) and BM25, 1.5 x 50 hits deep
    reads.clear()
    mem.search(QUESTION, k=50)
    assert [50, 50] in reads and [75, 75] not in reads
    reads.clear()
    mem.settings.context.search_depth = mem.settings.retrieval.deep_from
    try:
        mem.get_context_for_user("u1", "s1", query=QUESTION, max_tokens=2000)
    finally:
        mem.settings.context.search_depth = None
    prefetch = mem.settings.retrieval.prefetch_limit
    assert [prefetch] * 2 in reads and not any(max(r) > prefetch for r in reads)


def test_old_lines_show_their_date_once_and_no_time_of_day():
    """A recalled line older than a day before the newest message shows its date when the line above is on another
    date, and no time of day; a recent one keeps its time ("this morning" needs it)."""
    window = [message(90, "what did we settle on?")]  # 2024-05-01 10:30
    at = [datetime(2024, 3, 1, 8, 0, tzinfo=timezone.utc), datetime(2024, 3, 1, 8, 5, tzinfo=timezone.utc),
          datetime(2024, 3, 9, 23, 0, tzinfo=timezone.utc), datetime(2024, 4, 30, 20, 0, tzinfo=timezone.utc), T0 + timedelta(minutes=10),
          T0 + timedelta(minutes=20)]
    lines = [Candidate(MemoryLine(f"plan {i}", f"s1|m{i}", when, "Anna"), "memory", "message", 1.0 - i / 10, relevance=1.0,
                       term_set=frozenset({f"plan{i}"})) for i, when in enumerate(at)]
    out = assemble(summary=None, user_data=None, window=window, candidates=lines, max_tokens=500, count=len)
    shown = next(m.content for m in out if m.kind == "memory").split("\n")[1:]
    assert shown == ["- [2024-03-01] Anna: plan 0", "- Anna: plan 1", "- [2024-03-09] Anna: plan 2", "- [2024-04-30 20:00] Anna: plan 3",
                     "- [2024-05-01 09:10] Anna: plan 4", "- [09:20] Anna: plan 5"]


@pytest.mark.parametrize("first, step", [(T0, timedelta(minutes=7)), (T0 - timedelta(days=40), timedelta(hours=7))],
                         ids=["recent lines", "old lines"])
def test_the_whole_is_counted_once_and_the_budget_still_filled(first, step):
    """The refill's room is estimated (the dates and times of day the rendering leaves out, the newline a line's
    last token takes in), so the assembly counts the whole context once, not before and after the refill: the
    result stays under ``max_tokens`` and leaves no more room than the last line it could not fit."""
    from layered_memory.context.assemble import REFILL_SLACK
    from layered_memory.context.lines import MEMORY_HEADER
    from layered_memory.providers.tokens import get_token_counter

    real = get_token_counter()
    blocks: list[str] = []

    def count(text: str) -> int:
        if text.startswith(MEMORY_HEADER + "\n"):  # the whole block (its header alone is counted once for its cost)
            blocks.append(text)
        return real(text)

    window = [message(90, "so what do I pack for the trip?")]
    lines = [Candidate(MemoryLine(f"On day {i} we walk {i % 7 + 2} km along the {('river', 'coast', 'ridge')[i % 3]} trail.",
                                  f"s1|m{i}", first + step * i, "Anna"), "memory", "message", (1 + i) ** -1.4,
                       term_set=frozenset({f"day{i}", "trail"})) for i in range(80)]
    for budget in (300, 800, 1500):  # all 80 lines take about 1,800
        blocks.clear()
        out = assemble(summary=None, user_data=None, window=window, candidates=lines, max_tokens=budget, count=count)
        total = context_tokens(out, real)
        shown = next(m.content for m in out if m.kind == "memory")
        assert len(blocks) == 1 and blocks[0] == shown, budget  # one count of the block, the one shown
        longest = max(real("- " + c.item.render()) + 1 for c in lines)
        assert budget - REFILL_SLACK - longest <= total <= budget, (budget, total)
