"""BM25's length normalisation of the message vectors (``retrieval.message_k1`` / ``_b`` / ``_avgdl``): a long, wordy message that holds the
query's rare word is found before short messages that share only its common word. With Lucene's b=0.75 at
a fixed average length of 32 terms, the long message's one match was worth a fifth of a short message's,
and the rare word lost to the common one (docs/retrieval.md, "BM25's length normalisation")."""

from __future__ import annotations

from layered_memory import LayeredMemory, LayeredMemorySettings

LONG = (
    "Sorry for the wall of text, the quarterly review ran long again and the whole team is exhausted. "
    "We spent the morning arguing about the roadmap, the budget spreadsheet, the hiring freeze and the "
    "migration of the billing service, then the afternoon rewriting the onboarding documentation because "
    "nobody could agree on the structure, and after that another meeting about the meeting schedule itself. "
    "Tomorrow brings the vendor negotiation, the security audit, the office move planning and the "
    "retrospective, so weekends are precious now. The intern asked whether the dashboards could be redesigned "
    "before the conference, marketing wants new screenshots for the website, finance keeps chasing receipts "
    "from the trip to Lisbon, and the printer on the third floor jammed twice during the presentation. My "
    "manager promised fewer status reports next month, which nobody believes, and the coffee machine broke "
    "right before the deadline. Half the team caught a cold, the other half is on holiday, and the release "
    "slipped by another week. Anyway, I finally signed up for golf lessons on Saturdays."
)
SHORT = [
    ("s1", "anna", "Anna", "My car is in the garage again."),
    ("s2", "bob", "Bob", "What did the mechanic say?"),
    ("s3", "anna", "Anna", "The car needs new brakes."),
    ("s4", "bob", "Bob", "That sounds expensive."),
    ("s5", "anna", "Anna", "I might sell the car."),
    ("s6", "bob", "Bob", "Lunch on Friday?"),
    ("s7", "anna", "Anna", "Sure, the usual place."),
    ("s8", "bob", "Bob", "See you at noon."),
    ("s9", "anna", "Anna", "How was your week?"),
    ("s10", "bob", "Bob", "Busy, the kids had exams."),
    ("s11", "anna", "Anna", "Did they pass?"),
    ("s12", "bob", "Bob", "Both did, we celebrated with pizza."),
    ("s13", "anna", "Anna", "Lovely, which pizzeria?"),
    ("s14", "bob", "Bob", "The one near the station."),
    ("s15", "anna", "Anna", "I have heard good things."),
    ("s16", "bob", "Bob", "How is your sister?"),
    ("s17", "anna", "Anna", "She moved to Berlin."),
    ("s18", "bob", "Bob", "Big change for her."),
    ("s19", "anna", "Anna", "She loves it so far."),
]


def _lucene() -> LayeredMemorySettings:
    settings = LayeredMemorySettings()
    r = settings.retrieval
    r.message_k1, r.message_b, r.message_avgdl = 1.2, 0.75, 32.0  # the previous defaults (Lucene's, as for documents)
    return settings


def _first_bm25_hit(mem: LayeredMemory) -> str:
    hits = mem.search("golf car", route="bm25", k=3).hits
    assert hits
    return hits[0].id


def _first_after_writing(tmp_path, settings: LayeredMemorySettings) -> str:
    with LayeredMemory.embedded(tmp_path, embedder=None, settings=settings) as mem:
        rows = [{"message_id": mid, "chat_id": "c", "user_id": uid, "user_name": name, "content": text} for mid, uid, name, text in SHORT]
        rows.append({"message_id": "long", "chat_id": "c", "user_id": "bob", "user_name": "Bob", "content": LONG})
        mem.add_messages(rows)
        mem.flush(60)
        return _first_bm25_hit(mem)


def test_a_long_message_with_the_rare_word_comes_first(tmp_path):
    assert _first_after_writing(tmp_path, LayeredMemorySettings()) == "long"


def test_lucenes_normalisation_buries_it_under_the_common_word(tmp_path):
    assert _first_after_writing(tmp_path, _lucene()) in {"s1", "s3", "s5"}


def test_vectors_keep_their_parameters_until_a_reindex(tmp_path):
    """A store written with the previous defaults keeps its vectors when opened with today's (documented);
    ``mem.reindex()`` rewrites them with the settings' parameters."""
    assert _first_after_writing(tmp_path, _lucene()) in {"s1", "s3", "s5"}
    with LayeredMemory.embedded(tmp_path, embedder=None) as mem:
        assert _first_bm25_hit(mem) in {"s1", "s3", "s5"}
        assert mem.reindex() >= len(SHORT) + 1
        assert _first_bm25_hit(mem) == "long"
