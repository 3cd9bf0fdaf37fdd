"""Conversation sets for ``context.py``: LoCoMo and the synthetic en/ru/zh sets in one shape, their
ingestion in two framings, and the "evidence in the prompt" check.

A set is a list of ``Conv`` (turns with speaker, role, text, session, time; questions with the indices of
their evidence turns). Framings (how a bot would store the same chat):

- ``private``: every turn under one ``user_id`` (a private assistant: the human and the bot's replies);
- ``group``: each human speaker under their own ``user_id`` (a group chat), the bot's replies under the
  human's id with ``role="assistant"``; the question is asked by the conversation's first speaker.

Each session is one chat (``chat_id = session_key``), each question is asked in the last session after
its last turn (passed as ``query``, not stored, so every question sees the same store).

Evidence in the prompt: a turn is in the prompt when at least half of its 5-word shingles appear in
the prompt text (words: runs of letters and digits, casefolded; a CJK character is one word; a turn of
fewer than five words is one shingle).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from retrieval_lab import load as load_locomo_raw  # noqa: E402

_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]|[^\W_]+", re.UNICODE)
SHINGLE = 5


@dataclass
class Turn:
    speaker: str
    role: str
    text: str
    session: str
    time: datetime


@dataclass
class Conv:
    cid: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    evidence: list[list[int]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)

    @property
    def humans(self) -> list[str]:
        return list(dict.fromkeys(t.speaker for t in self.turns if t.role == "user"))

    @property
    def last_session(self) -> str:
        return self.turns[-1].session


def load_locomo(path: str, n: int = 0) -> list[Conv]:
    from retrieval_lab import CATEGORIES

    out = []
    for c in load_locomo_raw(path)[: n or None]:
        conv = Conv(c.sample_id)
        minute: dict[str, int] = {}
        for t in c.turns:
            minute[t["session"]] = minute.get(t["session"], -1) + 1
            conv.turns.append(Turn(t["speaker"], "user", t["text"], f"{c.sample_id}-{t['session'].replace('_', '')}",
                                   t["date"] + timedelta(minutes=minute[t["session"]])))
        conv.questions, conv.evidence = list(c.questions), [list(e) for e in c.evidence]
        conv.kinds = [CATEGORIES[k] for k in c.categories]
        out.append(conv)
    return out


def load_synth(seed: int, per_style: int = 2, langs: tuple[str, ...] | None = None) -> list[Conv]:
    from synthconv import LANGS, generate

    return _generated(generate(seed, per_style, langs=langs or LANGS))


def load_assistant(seed: int) -> list[Conv]:
    """The long assistant chats of ``benchmarks/assistantchat.py`` (10 users, 45 sessions each)."""
    from assistantchat import generate

    return _generated(generate(seed))


def load_file(path: str) -> list[Conv]:
    """A set from its file: ``synthconv.py`` / ``assistantchat.py`` output, or LongMemEval's own format
    (``retrieval_general.load_set``: an instance per conversation, its question asked of it)."""
    from retrieval_general import load_set

    return _generated(load_set(path))


def _generated(data: dict) -> list[Conv]:
    convs: dict[str, Conv] = {}
    starts: dict[str, list[int]] = {}
    for cd in data["conversations"]:
        conv = convs[cd["id"]] = Conv(cd["id"])
        starts[cd["id"]] = []
        for s in cd["sessions"]:
            starts[cd["id"]].append(len(conv.turns))
            t0 = datetime.fromisoformat(s["date"])
            for j, t in enumerate(s["turns"]):
                conv.turns.append(Turn(t["speaker"], t["role"], t["text"], s["id"], t0 + timedelta(minutes=j)))
    for q in data["questions"]:
        conv = convs[q["conv"]]
        conv.questions.append(q["question"])
        conv.evidence.append(sorted(starts[q["conv"]][si] + ti for si, ti in q["evidence"]))
        conv.kinds.append(f"{conv.cid.split('-')[0]}-{q['kind']}")
    return list(convs.values())


def user_of(conv: Conv, framing: str, speaker: str) -> str:
    """The user_id of a human speaker (ids are ASCII: the speaker's position among the humans)."""
    return conv.cid if framing == "private" else f"{conv.cid}:p{conv.humans.index(speaker)}"


def asker(conv: Conv, framing: str) -> str:
    return user_of(conv, framing, conv.humans[0])


def records(conv: Conv, framing: str) -> list[dict]:
    """The conversation as ``add_messages`` records in one framing."""
    out = []
    last_human = conv.humans[0]
    for i, t in enumerate(conv.turns):
        if t.role == "user":
            last_human = t.speaker
        user = user_of(conv, framing, t.speaker if t.role == "user" else last_human)
        out.append({
            "message_id": f"t{i}", "chat_id": t.session, "session_key": t.session, "user_id": user,
            "user_name": t.speaker if t.role == "user" else "", "role": t.role, "content": t.text, "create_time": t.time,
        })
    return out


# Questions no life-chat conversation answers (a bot's other users ask them): off-topic for every set here.
OFF_TOPIC = [
    "How do I rotate the Kubernetes service account token?", "Why does the payments pod crash with OOMKilled after the deploy?",
    "Which PostgreSQL version does the billing service run?", "What does error E4012 from the billing API mean?",
    "How do I roll back a Helm release to the previous revision?", "Where is the nginx ingress timeout configured?",
    "Как перезапустить воркер очереди после сбоя Redis?", "Какой таймаут у API платёжного шлюза?",
    "Почему падает миграция базы данных на стейджинге?", "Где лежит конфиг сборки для CI?",
    "怎么回滚上一次的数据库迁移?", "支付接口的超时时间是多少?", "如何查看容器的内存限制?", "测试环境的部署脚本在哪里?",
]


def words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def shingles(text: str) -> set[tuple[str, ...]]:
    w = words(text)
    if len(w) < SHINGLE:
        return {tuple(w)} if w else set()
    return {tuple(w[i : i + SHINGLE]) for i in range(len(w) - SHINGLE + 1)}


class PromptText:
    """A prompt's text, indexed for the shingle check."""

    def __init__(self, text: str) -> None:
        w = words(text)
        self.grams = {tuple(w[i : i + SHINGLE]) for i in range(max(0, len(w) - SHINGLE + 1))}
        self.joined = " " + " ".join(w) + " "

    def holds(self, turn_text: str) -> bool:
        sh = shingles(turn_text)
        if not sh:
            return False
        found = sum(1 for g in sh if (g in self.grams if len(g) == SHINGLE else f" {' '.join(g)} " in self.joined))
        return found * 2 >= len(sh)


def evidence_scores(prompt: str, conv: Conv, evidence: list[int]) -> tuple[float, float]:
    """(share of evidence turns in the prompt, 1.0 when every one is)."""
    p = PromptText(prompt)
    got = [p.holds(conv.turns[i].text) for i in evidence]
    return sum(got) / len(got), float(all(got))


__all__ = ["OFF_TOPIC", "Conv", "PromptText", "Turn", "asker", "evidence_scores", "load_file", "load_locomo", "load_synth", "records", "shingles", "words"]
