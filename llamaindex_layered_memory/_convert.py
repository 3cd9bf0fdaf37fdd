"""LlamaIndex ``ChatMessage`` <-> engine messages.

- Roles: user -> user; assistant / model / chatbot -> assistant; system / developer -> system;
  tool / function -> tool.
- ``content`` is the message's text; a message without text (an assistant turn that only calls
  tools) is stored as a readable rendering (``[tool call] recall({"query": "..."})``), so search and
  summaries see it.
- A message that plain text cannot carry (tool calls, ``tool_call_id``, images, another role name)
  keeps its full LlamaIndex form in ``metadata["llamaindex_message"]`` and comes back unchanged.
- Ids are deterministic: a hash of user, session, position in the session, role and text. Putting
  the same history again (``set``) writes nothing new; two users never share an id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from layered_memory import ContextMessage, Message
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock

ROLE_TO_ENGINE = {
    "user": "user",
    "assistant": "assistant",
    "model": "assistant",
    "chatbot": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
}
ORIGINAL_KEY = "llamaindex_message"
SOURCE = "llamaindex"
PERSONAL = "personal"  # the chat kind of a session keyed by user: another user's session of the same name stays theirs
# keys LlamaIndex's Memory adds to additional_kwargs on its way to the blocks; not part of the message
TRANSIENT_KWARGS = ("session_id",)


def role_value(message: ChatMessage) -> str:
    role = message.role
    return role.value if isinstance(role, MessageRole) else str(role)


def engine_role(message: ChatMessage) -> str:
    role = role_value(message)
    try:
        return ROLE_TO_ENGINE[role]
    except KeyError:
        raise ValueError(
            f"message role={role!r} has no layered-memory equivalent (known: {', '.join(ROLE_TO_ENGINE)}); "
            "map it to user, assistant, system or tool before putting it"
        ) from None


def _kwargs(message: ChatMessage) -> dict[str, Any]:
    return {k: v for k, v in (message.additional_kwargs or {}).items() if k not in TRANSIENT_KWARGS}


def message_text(message: ChatMessage) -> str:
    """The text the engine stores and the token count sees: the text blocks, else a rendering."""
    text = message.content
    if text and text.strip():
        return text
    parts = []
    for block in message.blocks:
        if isinstance(block, ToolCallBlock):
            args = block.tool_kwargs if isinstance(block.tool_kwargs, str) else json.dumps(block.tool_kwargs, ensure_ascii=False, default=str)
            parts.append(f"[tool call] {block.tool_name}({args})")
        elif not isinstance(block, TextBlock):
            parts.append(f"[{getattr(block, 'block_type', type(block).__name__)}]")
    for call in _kwargs(message).get("tool_calls") or []:  # older OpenAI-style tool calls
        fn = call.get("function", {}) if isinstance(call, dict) else getattr(call, "function", None)
        name = fn.get("name") if isinstance(fn, dict) else getattr(fn, "name", "?")
        args = fn.get("arguments") if isinstance(fn, dict) else getattr(fn, "arguments", "")
        parts.append(f"[tool call] {name}({args})")
    return "\n".join(parts)


def without_tools(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """``messages`` without tool results and tool calls: a tool / function message is left out, an assistant
    message that calls tools keeps only its text (left out when it has none). What an agent found with a
    memory tool would otherwise be stored and found again by the next search."""
    out = []
    for message in messages:
        if not isinstance(message, ChatMessage):
            out.append(message)  # to_engine names the wrong type
            continue
        role = role_value(message)
        if role in ("tool", "function"):
            continue
        kwargs = _kwargs(message)
        calls = any(isinstance(b, ToolCallBlock) for b in message.blocks) or bool(kwargs.get("tool_calls"))
        if not calls:
            out.append(message)
            continue
        text = "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock) and b.text.strip())
        if text:
            rest = {k: v for k, v in (message.additional_kwargs or {}).items() if k != "tool_calls"}
            out.append(ChatMessage(role=message.role, content=text, additional_kwargs=rest))
    return out


def is_plain(message: ChatMessage) -> bool:
    """True when role and text alone rebuild the message."""
    return (
        role_value(message) in ("user", "assistant", "system", "tool")
        and not _kwargs(message)
        and len(message.blocks) == 1
        and isinstance(message.blocks[0], TextBlock)
    )


def message_id(user_id: str, session_id: str, position: int, role: str, text: str) -> str:
    digest = hashlib.sha1(f"{user_id}\x1f{session_id}\x1f{position}\x1f{role}\x1f{text}".encode()).hexdigest()
    return f"li-{digest[:24]}"


def to_engine(messages: Sequence[ChatMessage], *, user_id: str, session_id: str, start: int) -> list[dict[str, Any]]:
    """Engine message dicts for ``messages`` at positions ``start, start+1, ...`` of the session.

    Messages with no text and nothing else (an empty reply) are skipped: the engine stores text.
    """
    out = []
    position = start
    for message in messages:
        if not isinstance(message, ChatMessage):
            raise TypeError(f"expected a llama_index ChatMessage, got {type(message).__name__}; wrap text as ChatMessage(role='user', content=...)")
        text = message_text(message)
        if not text.strip():
            continue
        role = engine_role(message)
        metadata: dict[str, Any] = {"source": SOURCE}
        if not is_plain(message):
            dump = message.model_dump(mode="json")
            dump["additional_kwargs"] = _kwargs(message)
            metadata[ORIGINAL_KEY] = dump
        out.append({
            "message_id": message_id(user_id, session_id, position, role, text),
            "chat_id": session_id, "user_id": user_id, "role": role, "content": text, "metadata": metadata,
        })
        position += 1
    return out


def from_engine(message: Message) -> ChatMessage:
    """The ChatMessage that was put (or a plain one for messages written by other clients)."""
    original = (message.metadata or {}).get(ORIGINAL_KEY)
    if original:
        try:
            return ChatMessage.model_validate(original)
        except Exception:  # stored by another llama-index version: fall back to the text
            pass
    return ChatMessage(role=message.role, content=message.content)


def context_to_chat(context: Sequence[ContextMessage], stored: Mapping[tuple[str, str], Message]) -> list[ChatMessage]:
    """ContextMessages -> ChatMessages; window messages (``stored`` maps (chat_id, message_id) to their
    records) come back in their original form unless the engine cut their text to fit the budget."""
    out = []
    for item in context:
        original = stored.get((item.chat_id or "", item.message_id)) if item.message_id else None
        if item.kind == "window" and original is not None and original.content == item.content:
            out.append(from_engine(original))
        else:
            out.append(ChatMessage(role=item.role, content=item.content))
    return out

