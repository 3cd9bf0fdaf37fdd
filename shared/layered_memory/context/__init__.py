"""The prompt context (seed 002): what ``get_context_for_user`` hands the model, within a token budget.

    window.py      who may see what: the session window, a hit's following turns, the search filters
    candidates.py  what the tiers offer: recalled messages and neighbours, topic summaries, facts,
                   documents; read-your-writes for messages the index writer has not embedded yet
    sources.py     memory sources behind one signature (``Recall`` -> candidates): the default list, yours beside it
    ranking.py     one value scale, the relevance floor, duplicates
    assemble.py    the greedy fill of ``max_tokens`` in the seed 002 block order
    lines.py       the one line format (``[2024-05-02 09:05] Anna: text``) and ``Context.text``
    build.py       the whole call: read, recall, rank, assemble

See docs/context.md for the measured numbers.
"""

from .assemble import assemble, check_context_args, format_user_data
from .build import build_context
from .candidates import message_key
from .sources import MemorySource, Recall, default_sources
from .lines import (
    CONVERSATION_HEADER, DOCUMENTS_HEADER, MEMORY_HEADER, PER_MESSAGE_TOKENS, SUMMARY_PREFIX, USER_DATA_HEADER, Context,
    MemoryLine, context_line, context_tokens, hit_line, line, message_line, speaker_name, stamp,
)
from .window import session_after, session_window, visible_scope, without_leading_replies

__all__ = [
    "CONVERSATION_HEADER", "Context", "DOCUMENTS_HEADER", "MEMORY_HEADER", "MemoryLine", "MemorySource", "PER_MESSAGE_TOKENS", "Recall",
    "SUMMARY_PREFIX", "USER_DATA_HEADER", "assemble", "build_context", "check_context_args", "context_line",
    "context_tokens", "default_sources", "format_user_data", "hit_line", "line", "message_key", "message_line", "session_after", "session_window",
    "speaker_name", "stamp", "visible_scope", "without_leading_replies",
]
