"""LangChain messages <-> engine records.

Writing (``to_record``): ``message.id`` becomes ``message_id`` (a generated one when missing; an id
the engine cannot hold is hashed and the original kept); the role comes from the message type;
``create_time`` / ``timestamp``, ``user_name``, ``reply_message_id``, ``root_message_id``,
``is_mention_bot``, ``chat_id`` and ``metadata`` are read from ``additional_kwargs`` or
``response_metadata``; ``HumanMessage.name`` is the user name. Everything LangChain-specific
(type, original content blocks, tool calls, tool_call_id, additional_kwargs, response_metadata)
is kept under ``metadata["lc"]`` so reading gives the same message back.

Reading (``to_message``): the message as written, with ``id`` = message_id and the engine's view in
``response_metadata["layered_memory"]`` (message_id, create_time, user_name, reply/root ids,
topic_id, session_key, chat_id, user_id).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_chunk_to_message,
)

from layered_memory import ContextMessage, Message

LC = "lc"
ENGINE_KEY = "layered_memory"
_ID = re.compile(r"^[A-Za-z0-9_.:@/+=\-]{1,200}$")
_FIELDS = ("user_name", "reply_message_id", "root_message_id", "is_mention_bot", "chat_id")
_ROLE_OF_TYPE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}
_CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "system": "system", "tool": "tool"}


def _jsonable(value: Any) -> Any:
    """A JSON-safe copy (unknown objects become strings) so metadata always fits the RecordStore."""
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def text_of(content: Any) -> str:
    """Plain text of a message content (a string, or the text blocks of a list)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def safe_id(raw: str | None) -> tuple[str, str | None]:
    """(message_id, original id when it had to be changed)."""
    if raw is None or raw == "":
        return uuid.uuid4().hex, None
    if _ID.fullmatch(raw):  # "$" alone would pass a trailing newline
        return raw, None
    return "lc-" + hashlib.sha1(raw.encode()).hexdigest()[:32], raw


def role_of(msg: BaseMessage) -> str:
    if isinstance(msg, ChatMessage):
        role = _CHAT_ROLES.get(msg.role)
        if role is None:
            raise ValueError(
                f"ChatMessage role={msg.role!r}: the engine stores user, assistant, system or tool; "
                "use one of those (or human / ai) as the role"
            )
        return role
    role = _ROLE_OF_TYPE.get(msg.type)
    if role is None:
        raise ValueError(f"message type={msg.type!r} is not a chat message the engine stores; pass Human/AI/System/Tool messages")
    return role


def _first(msg: BaseMessage, *names: str) -> Any:
    for src in (msg.additional_kwargs, msg.response_metadata):
        for name in names:
            if src.get(name) is not None:
                return src[name]
    return None


def to_record(msg: BaseMessage, *, user_id: str | None, session_id: str, chat_id: str | None = None) -> dict[str, Any]:
    """An ``add_messages`` record for one LangChain message (a streamed chunk is stored as its message)."""
    msg = message_chunk_to_message(msg)  # AIMessageChunk -> AIMessage: what a streamed chain's output is
    message_id, original_id = safe_id(msg.id)
    text = text_of(msg.content)
    lc: dict[str, Any] = {"type": msg.type}
    if original_id is not None:
        lc["id"] = original_id
    if not isinstance(msg.content, str) or not text.strip():
        lc["content"] = _jsonable(msg.content)
    tool_calls = list(getattr(msg, "tool_calls", None) or [])
    if tool_calls:
        lc["tool_calls"] = _jsonable(tool_calls)
    if isinstance(msg, ToolMessage):
        lc["tool_call_id"] = msg.tool_call_id
        if msg.status != "success":
            lc["status"] = msg.status
    if isinstance(msg, ChatMessage):
        lc["role"] = msg.role
    if msg.name:
        lc["name"] = msg.name
    if msg.additional_kwargs:
        lc["additional_kwargs"] = _jsonable(msg.additional_kwargs)
    if msg.response_metadata:
        lc["response_metadata"] = _jsonable(msg.response_metadata)
    if not text.strip():  # the engine indexes text: describe tool calls, else a marker
        calls = ", ".join(f"{c['name']}({json.dumps(c.get('args', {}), ensure_ascii=False, default=str)})" for c in tool_calls)
        text = f"[tool call: {calls}]" if calls else f"[empty {msg.type} message]"
    extra = _first(msg, "metadata")
    record: dict[str, Any] = {
        "message_id": message_id,
        "chat_id": _first(msg, "chat_id") or chat_id or session_id,
        "session_key": session_id,
        "content": text,
        "role": role_of(msg),
        "metadata": {**(_jsonable(extra) if isinstance(extra, Mapping) else {}), LC: lc},
    }
    if user_id is not None:
        record["user_id"] = user_id
    name = _first(msg, "user_name") or (msg.name if msg.type == "human" else None)
    if name:
        record["user_name"] = str(name)
    for field in ("reply_message_id", "root_message_id", "is_mention_bot"):
        value = _first(msg, field)
        if value is not None:
            record[field] = value
    created = _first(msg, "create_time", "timestamp")
    if created is not None:
        record["create_time"] = created
    return record


def personal_kind(records: Sequence[Mapping[str, Any]], session_id: str) -> str | None:
    """``"personal"`` when every record's chat is the session itself (no chat given): a session keyed by
    user, so another user's session of the same name is another conversation (``mem.chats``)."""
    return "personal" if records and all(r.get("chat_id") == session_id for r in records) else None


def engine_view(m: Message) -> dict[str, Any]:
    return {
        "message_id": m.message_id, "create_time": m.create_time.isoformat().replace("+00:00", "Z"),
        "user_name": m.user_name or None, "reply_message_id": m.reply_message_id, "root_message_id": m.root_message_id,
        "topic_id": m.topic_id, "session_key": m.session_key, "chat_id": m.chat_id, "user_id": m.user_id,
    }


def to_message(m: Message) -> BaseMessage:
    """The LangChain message for a stored record (the original when it was written by this package)."""
    lc = m.metadata.get(LC) if isinstance(m.metadata.get(LC), Mapping) else {}
    content: Any = lc.get("content", m.content)
    kwargs: dict[str, Any] = {
        "content": content,
        "id": lc.get("id", m.message_id),
        "additional_kwargs": dict(lc.get("additional_kwargs") or {}),
        "response_metadata": {**(lc.get("response_metadata") or {}), ENGINE_KEY: engine_view(m)},
    }
    name = lc.get("name") or (m.user_name or None if m.role == "user" else None)
    if name:
        kwargs["name"] = name
    kind = lc.get("type")
    if kind == "chat" or (kind is None and m.role not in ("user", "assistant", "system", "tool")):
        return ChatMessage(role=lc.get("role", m.role), **kwargs)
    if m.role == "user":
        return HumanMessage(**kwargs)
    if m.role == "assistant":
        return AIMessage(tool_calls=list(lc.get("tool_calls") or []), **kwargs)
    if m.role == "system":
        return SystemMessage(**kwargs)
    if kind == "function":
        return FunctionMessage(name=name or "function", **{k: v for k, v in kwargs.items() if k != "name"})
    tool_call_id = lc.get("tool_call_id") or m.metadata.get("tool_call_id") or m.message_id
    return ToolMessage(tool_call_id=tool_call_id, status=lc.get("status", "success"), **kwargs)


def context_refs(ctx: Sequence[ContextMessage]) -> list[tuple[str, str]]:
    """(chat_id, message_id) of the stored messages in a context (the window)."""
    return [(c.chat_id, c.message_id) for c in ctx if c.message_id and c.chat_id]


def context_to_messages(ctx: Sequence[ContextMessage], stored: Mapping[tuple[str, str], Message]) -> list[BaseMessage]:
    """Context messages as LangChain messages, in the shape every chat provider accepts: one leading
    ``SystemMessage`` holding the summary, user data and memory blocks (joined by blank lines, their
    kinds in ``response_metadata["layered_memory"]["kinds"]``), then the window restored from its
    records (``stored`` maps (chat_id, message_id) to them), opened by a human turn (``user_first``).
    Anthropic and Google take system text only at the start of a conversation; a system message
    between turns is refused or moved, and so is a conversation whose first turn is the assistant's."""
    system: list[str] = []
    kinds: list[str] = []
    out: list[BaseMessage] = []
    for c in ctx:
        key = (c.chat_id or "", c.message_id or "")
        if c.message_id and key in stored:
            m = to_message(stored[key])
            if isinstance(m, SystemMessage):  # a stored system message joins the leading one
                system.append(text_of(m.content))
                kinds.append("window")
            else:
                out.append(m)
            continue
        meta = {ENGINE_KEY: {"kind": c.kind, "message_id": c.message_id}}
        if c.role == "assistant":
            out.append(AIMessage(content=c.content, id=c.message_id, response_metadata=meta))
        elif c.role == "user":
            out.append(HumanMessage(content=c.content, id=c.message_id, name=c.name, response_metadata=meta))
        else:
            system.append(c.content)
            kinds.append(c.kind)
    head: list[BaseMessage] = []
    if system:
        head = [SystemMessage(content="\n\n".join(system), response_metadata={ENGINE_KEY: {"kinds": kinds}})]
    return head + user_first(drop_orphans(out))


def user_first(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` opened by a human turn: the bot's replies (and tool results) before the first human
    message go (all of them when there is none), since Anthropic and Gemini refuse a conversation that
    starts with the assistant."""
    for i, m in enumerate(messages):
        if isinstance(m, HumanMessage) or (isinstance(m, ChatMessage) and _CHAT_ROLES.get(m.role) == "user"):
            return list(messages[i:])
    return []


def system_text(messages: Sequence[BaseMessage]) -> str:
    """The text of the leading system message of a ``context_to_messages`` result ("" when none)."""
    return text_of(messages[0].content) if messages and isinstance(messages[0], SystemMessage) else ""


def drop_orphans(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Remove tool messages without their AI tool call and tool calls without their result, so a cut
    window never breaks a chat API's pairing rule."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    out: list[BaseMessage] = []
    called: set[str] = set()
    for m in messages:
        if isinstance(m, AIMessage) and m.tool_calls:
            ids = [c.get("id") for c in m.tool_calls]
            if all(i in answered for i in ids):
                called.update(i for i in ids if i)
                out.append(m)
            elif text_of(m.content).strip():
                out.append(m.model_copy(update={"tool_calls": [], "invalid_tool_calls": []}))
            continue
        if isinstance(m, ToolMessage) and m.tool_call_id not in called:
            continue
        out.append(m)
    return out
