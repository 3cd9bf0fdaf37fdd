"""Sessions as units of a search result (layered_memory.retrieval.groups)."""

from __future__ import annotations

import pytest

from layered_memory.retrieval.groups import AGGREGATIONS, group_ranked


def p(chat: str, day: int, minute: int = 0, session: str | None = None) -> dict:
    return {"chat_id": chat, "session_key": session or chat, "timestamp": f"2024-03-{day:02d}T10:{minute:02d}:00+00:00"}


def test_aggregations_rank_one_strong_turn_against_several_good_ones():
    payloads = [p("a", 1), p("b", 9, 0), p("b", 9, 1), p("b", 9, 2)]
    scores = [1.0, 0.7, 0.6, 0.5]
    best = {how: group_ranked(payloads, scores, how=how, gap_seconds=3600)[0].key[0] for how in AGGREGATIONS}
    assert best == {"max": "a", "top2": "b", "top3": "b", "decay": "b"}


def test_a_chat_splits_into_sessions_at_the_gap_and_keeps_session_keys_apart():
    payloads = [p("c", 1, 0), p("c", 1, 5), p("c", 8, 0), p("c", 1, 6, session="side")]
    groups = group_ranked(payloads, [0.9, 0.8, 0.7, 0.6], how="top2", gap_seconds=12 * 3600)
    assert [sorted(g.members) for g in groups] == [[0, 1], [2], [3]]
    assert {g.key for g in groups} == {("c", "c", 0), ("c", "c", 1), ("c", "side", 0)}


def test_unknown_aggregation_is_refused():
    with pytest.raises(ValueError, match="aggregation"):
        group_ranked([p("a", 1)], [1.0], how="mean", gap_seconds=1)
