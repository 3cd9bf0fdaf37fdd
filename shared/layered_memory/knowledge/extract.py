"""Long-term extraction through the chat model (seed 001, 4.1): entities, relations, user profiles.

The prompts are the seed's, in English, with three additions: each message carries an ``id`` so the
model can say which messages a fact came from (provenance), descriptions stay in the conversation's
language, and a relation says whether it is ``exclusive`` (one target at a time: lives_in, works_at),
which lets a newer fact supersede an older one. Answers are parsed robustly (bare JSON, fenced, or
embedded in prose) and validated field by field; invalid items are dropped, never guessed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from ..models import Message
from ..topics.llm import ModelCaller, parse_json

logger = logging.getLogger(__name__)

ENTITY_TYPES = ("PERSON", "LOCATION", "ORGANIZATION", "PRODUCT", "EVENT", "OTHER")

ENTITY_PROMPT = """Extract the important entities (people, places, organizations, products, events, ...) from this conversation:

{conversation}

Return a JSON list of entities, each with the fields:
- entity_name: the entity's name as written in the conversation
- entity_type: one of PERSON, LOCATION, ORGANIZATION, PRODUCT, EVENT, OTHER
- confidence: a float between 0 and 1
- mentions: how many times it is mentioned
- description: what the conversation says about it, in the conversation's language (do not translate)
- message_ids: the ids of the messages it comes from

Only extract entities that are clearly mentioned and important; ignore vague ones. Answer with JSON only."""

RELATION_PROMPT = """Extract the relations between entities in this conversation.

Conversation:
{conversation}

Known entities:
{entities}

Return a JSON list of relations, each with the fields:
- source_entity: the source entity's name (from the known entities)
- target_entity: the target entity's name (from the known entities)
- relation_type: a short snake_case type, e.g. works_at, lives_in, friend_of, owns, likes
- description: the relation in the conversation's language (do not translate)
- confidence: a float between 0 and 1
- exclusive: true when the source can have only one such relation at a time (lives_in, works_at, married_to)
- message_ids: the ids of the messages it comes from

Only extract relations stated clearly; ignore speculation. Answer with JSON only."""

PROFILE_PROMPT = """Build a profile of a user from their messages.

User name: {user_name}
Current profile (may be empty): {previous}
New messages:
{messages}

Return a JSON object with the fields:
- profile_text: a short description of the user, in the language of their messages (do not translate)
- preferences: a list of {{"key": ..., "value": ..., "confidence": 0..1}} (one value per key; a newer value replaces an older one)
- traits: a list of {{"trait_name": ..., "confidence": 0..1}}

Only include what the messages show clearly; do not speculate. Answer with JSON only."""


def conversation_json(messages: Sequence[Message]) -> str:
    rows = [{"id": m.message_id, "role": m.role, "user_name": m.user_name or m.user_id, "content": m.content} for m in messages]
    return json.dumps(rows, ensure_ascii=False, indent=2)


def _confidence(value: Any, default: float = 0.8) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    return min(max(x, 0.0), 1.0)


def _ids(value: Any, known: set[str]) -> list[str]:
    if not isinstance(value, list):
        return []
    return [str(v) for v in value if str(v) in known]


def _items(parsed: Any, *keys: str) -> list[Any]:
    """A list from the answer: the list itself, or the first list under one of ``keys`` in an object."""
    if isinstance(parsed, list):
        return parsed
    if isinstance(parsed, dict):
        for k in keys:
            if isinstance(parsed.get(k), list):
                return parsed[k]
    return []


def _sources(name: str, ids: list[str], messages: Sequence[Message]) -> list[str]:
    if ids:
        return ids
    low = name.casefold()
    hits = [m.message_id for m in messages if low and low in m.content.casefold()]
    return hits or [m.message_id for m in messages]


def validate_entities(parsed: Any, messages: Sequence[Message]) -> list[dict[str, Any]]:
    known = {m.message_id for m in messages}
    out: dict[str, dict[str, Any]] = {}
    for e in _items(parsed, "entities"):
        if not isinstance(e, dict) or not isinstance(e.get("entity_name"), str) or not e["entity_name"].strip():
            continue
        name = e["entity_name"].strip()[:200]
        etype = str(e.get("entity_type") or "OTHER").upper()
        mentions = e.get("mentions", 1)
        out[name.casefold()] = {
            "entity_name": name,
            "entity_type": etype if etype in ENTITY_TYPES else "OTHER",
            "confidence": _confidence(e.get("confidence")),
            "mentions": int(mentions) if isinstance(mentions, (int, float)) and mentions >= 1 else 1,
            "description": str(e.get("description") or "")[:1000],
            "message_ids": _sources(name, _ids(e.get("message_ids"), known), messages),
        }
    return list(out.values())


def validate_relations(parsed: Any, entities: Sequence[dict[str, Any]], messages: Sequence[Message]) -> list[dict[str, Any]]:
    known = {m.message_id for m in messages}
    names = {e["entity_name"].casefold(): e["entity_name"] for e in entities}
    out = []
    for r in _items(parsed, "relations"):
        if not isinstance(r, dict):
            continue
        src, tgt, rtype = r.get("source_entity"), r.get("target_entity"), r.get("relation_type")
        if not all(isinstance(x, str) and x.strip() for x in (src, tgt, rtype)):
            continue
        if src.strip().casefold() not in names or tgt.strip().casefold() not in names:  # type: ignore[union-attr]
            continue
        rtype = "_".join(rtype.strip().lower().split())[:80]  # type: ignore[union-attr]
        out.append({
            "source_entity": names[src.strip().casefold()], "target_entity": names[tgt.strip().casefold()],  # type: ignore[union-attr]
            "relation_type": rtype, "description": str(r.get("description") or "")[:1000],
            "confidence": _confidence(r.get("confidence")), "exclusive": r.get("exclusive") is True,
            "message_ids": _ids(r.get("message_ids"), known) or _sources(str(src), [], messages),
        })
    return out


def validate_profile(parsed: Any) -> dict[str, Any] | None:
    if not isinstance(parsed, dict):
        return None
    prefs = []
    for p in parsed.get("preferences") or []:
        if isinstance(p, dict) and isinstance(p.get("key"), str) and p.get("value") is not None:
            prefs.append({"key": p["key"].strip()[:100], "value": str(p["value"])[:300], "confidence": _confidence(p.get("confidence"))})
    traits = []
    for t in parsed.get("traits") or []:
        name = t.get("trait_name") if isinstance(t, dict) else t if isinstance(t, str) else None
        if isinstance(name, str) and name.strip():
            traits.append({"trait_name": name.strip()[:100], "confidence": _confidence(t.get("confidence") if isinstance(t, dict) else None)})
    text = parsed.get("profile_text")
    return {"profile_text": str(text or "")[:2000], "preferences": prefs, "traits": traits}


def extract_entities(messages: Sequence[Message], caller: ModelCaller) -> list[dict[str, Any]]:
    answer = caller.call(ENTITY_PROMPT.format(conversation=conversation_json(messages)), operation="extract_entities")
    parsed = parse_json(answer)
    if parsed is None:
        logger.warning("entity extraction: no JSON in the model's answer (%d chars)", len(answer))
        return []
    return validate_entities(parsed, messages)


def extract_relations(messages: Sequence[Message], entities: Sequence[dict[str, Any]], caller: ModelCaller) -> list[dict[str, Any]]:
    if len(entities) < 2:
        return []
    listed = [{k: e[k] for k in ("entity_name", "entity_type", "description")} for e in entities]
    prompt = RELATION_PROMPT.format(conversation=conversation_json(messages), entities=json.dumps(listed, ensure_ascii=False, indent=2))
    parsed = parse_json(caller.call(prompt, operation="extract_relations"))
    if parsed is None:
        logger.warning("relation extraction: no JSON in the model's answer")
        return []
    return validate_relations(parsed, entities, messages)


def build_profile(user_name: str, messages: Sequence[Message], previous: str, caller: ModelCaller) -> dict[str, Any] | None:
    texts = json.dumps([m.content for m in messages], ensure_ascii=False, indent=2)
    prompt = PROFILE_PROMPT.format(user_name=user_name, previous=previous or "(none)", messages=texts)
    parsed = parse_json(caller.call(prompt, operation="build_profile"))
    profile = validate_profile(parsed)
    if profile is None:
        logger.warning("profile: no JSON object in the model's answer")
    return profile
