"""Multi-session conversations with one summary per session, for ``benchmarks/summaries.py --pairs``.

Two kinds of sets, so an evaluator tuned on one meets the other:

* LoCoMo (``data/locomo10.json``, read in place, never copied): 10 conversations of two people, 19-32
  sessions each. Three summaries per session, written apart from each other: ``locomo-session``, the
  human ``session_summary`` (a paragraph, starts with the session's date); ``locomo-events``, the
  ``event_summary`` events of the session (one or two short sentences per speaker); ``locomo-facts``,
  the ``observation`` facts (a sentence per fact, close to the turns' words).
* code-generated (no model), ``synth-en`` / ``synth-ru`` / ``synth-zh``: the vocabulary of
  ``synthconv.py`` (facts with a value, session themes, filler, assistant replies). Two styles per
  language: two friends who greet each other by name every session and share two life events per
  session (each kind of event happens twice, to either friend, with another value: the hard case),
  and a user with an assistant, one theme per session (every theme twice, with another value) and
  one life event. The summary paraphrases the session's events in the third person (templates below,
  not the turns' words), names the speakers, and half of them open with the session's date.

A pair is (session, candidate summary) scored against the session's messages: the true summary should
beat ``same-chat`` candidates (other sessions' summaries of the same conversation: same people, same
style) and ``off-topic`` ones (a session of another conversation of the same set).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from synthconv import FACTS, FILLER, NAMES, REPLIES, THEMES, agree

from layered_memory.models import Message


@dataclass
class Session:
    id: str
    messages: list[Message]
    summary: str


@dataclass
class Conversation:
    id: str
    lang: str
    sessions: list[Session] = field(default_factory=list)


def _message(chat: str, mid: str, speaker: str, text: str, when: datetime, role: str = "user") -> Message:
    uid = "u" + "".join(f"{ord(c):x}" for c in speaker)[:40]  # ids are ASCII
    return Message.build({"message_id": mid, "chat_id": chat, "user_id": uid, "user_name": speaker,
                         "role": role, "content": agree(text, speaker), "create_time": when})


# -- LoCoMo -----------------------------------------------------------------------------------------------
def locomo_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> datetime (UTC)."""
    return datetime.strptime(text.replace(",", ""), "%I:%M %p on %d %B %Y").replace(tzinfo=timezone.utc)


def locomo_sets(path: str | Path) -> dict[str, list[Conversation]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    sets: dict[str, list[Conversation]] = {"locomo-session": [], "locomo-events": [], "locomo-facts": []}
    for conv in data:
        c, cid = conv["conversation"], conv["sample_id"]
        convs = {name: Conversation(cid, "en") for name in sets}
        n = 1
        while f"session_{n}" in c:
            key = f"session_{n}"
            when = locomo_time(c[f"{key}_date_time"])
            msgs = [_message(cid, t["dia_id"], t["speaker"], t["text"], when + timedelta(minutes=i))
                    for i, t in enumerate(c[key]) if t.get("text")]
            events = (conv.get("event_summary") or {}).get(f"events_{key}") or {}
            facts = (conv.get("observation") or {}).get(f"{key}_observation") or {}
            texts = {
                "locomo-session": (conv.get("session_summary") or {}).get(f"{key}_summary") or "",
                "locomo-events": " ".join(e.strip().rstrip(".") + "." for who, es in events.items() if who != "date" for e in es if e.strip()),
                "locomo-facts": " ".join(f[0].strip() for per in facts.values() for f in per if f and f[0].strip()),
            }
            for name, text in texts.items():
                if msgs and text.strip():
                    convs[name].sessions.append(Session(f"{cid}/{key}", msgs, text.strip()))
            n += 1
        for name, cv in convs.items():
            if len(cv.sessions) >= 2:
                sets[name].append(cv)
    return sets


# -- code-generated ---------------------------------------------------------------------------------------
# third-person summaries of FACTS[lang][k] ({s}: who, {v}: the value) and THEMES[lang][k]
FACT_SUMMARY = {
    "en": ["{s} adopted a {v} puppy from a shelter.", "{s} has been taking {v} lessons with a teacher.",
           "{s} is relocating to {v} in the autumn because of a new job.", "{s}'s sister had a baby girl named {v}.",
           "{s} finished a first {v} and is still sore.", "{s} is experimenting with a {v} diet for a month.",
           "{s} accepted an offer to work as a {v} at a startup.", "{s} spent the holidays hiking in {v}."],
    "ru": ["{s} рассказывает, что из приюта взяли щенка, порода {v}.", "{s} занимается с педагогом, инструмент {v}.",
           "{s} осенью переезжает из-за новой работы, город {v}.", "{s} рассказывает, что у сестры родилась дочка, её зовут {v}.",
           "{s} рассказывает о первом забеге, дистанция {v}.", "{s} пробует новое питание на месяц: {v}.",
           "{s} получает должность в стартапе: {v}.", "{s} провёл праздники в походе, место {v}."],
    "zh": ["{s}从收容所领养了一只{v}。", "{s}开始跟老师学{v}。", "{s}秋天因为新工作要搬到{v}。", "{s}的姐姐生了女儿,名字叫{v}。",
           "{s}完成了第一个{v}。", "{s}这个月在尝试{v}饮食。", "{s}接受了创业公司的{v}职位。", "{s}假期去{v}徒步了。"],
}
THEME_SUMMARY = {
    "en": ["{s} is planning a spring trip to {v} and asked where to stay, whether a rail pass pays off and which areas to avoid.",
           "{s} is renovating the {v}; the contractor's quote is high, and they weighed tiles against vinyl and how to keep the work on schedule.",
           "{s} has an interview for a {v} role and prepared salary answers and stories for the technical part.",
           "{s} wants to grow {v} on the balcony and asked about soil, yellow seedlings and when to harvest."],
    "ru": ["{s} планирует весной поездку ({v}) и спрашивает, где жить, нужен ли проездной и каких районов избегать.",
           "{s} делает ремонт ({v}): смета подрядчика высокая, обсудили плитку и винил и как уложиться в сроки.",
           "{s} готовится к собеседованию на позицию {v}: ответы про зарплату и техническую часть.",
           "{s} хочет вырастить на балконе {v} и спрашивает про грунт, жёлтую рассаду и сроки урожая."],
    "zh": ["{s}计划春天去{v}旅行,问了住哪里、通票是否划算以及该避开哪些街区。",
           "{s}在装修{v},包工头报价太高,比较了瓷砖和地板革,还讨论了怎样按时完工。",
           "{s}要参加{v}职位的面试,准备了薪资问题的回答和技术部分的故事。",
           "{s}想在阳台上种{v},问了土壤、幼苗发黄以及什么时候收获。"],
}
GREETING = {"en": ["Hi {o}! How have you been?", "Hey {o}, good to hear from you!"],
            "ru": ["Привет, {o}! Как дела?", "{o}, привет, рад тебя слышать!"],
            "zh": ["{o},你好!最近怎么样?", "嗨,{o},好久不见!"]}
DATE_OPENING = {"en": "On {d} {m} {y}, {a} and {b} caught up.", "ru": "{d} {m} {y} года {a} и {b} созвонились.",
                "zh": "{y}年{mi}月{d}日,{a}和{b}聊了聊。"}
MONTHS_GEN = {"en": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"],
              "ru": ["января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября", "ноября", "декабря"],
              "zh": [""] * 12}
SMALL_TALK = {"en": "They also chatted about work and the weather.", "ru": "Ещё поговорили о работе и погоде.",
              "zh": "他们还聊了工作和天气。"}


def _opening(lang: str, when: datetime, a: str, b: str) -> str:
    return DATE_OPENING[lang].format(d=when.day, m=MONTHS_GEN[lang][when.month - 1], mi=when.month, y=when.year, a=a, b=b)


def _chat(lang: str, cid: str, rng: random.Random, n_sessions: int) -> Conversation:
    a, b = rng.sample(NAMES[lang], 2)
    facts = FACTS[lang]
    slots = [(k, v) for k in range(len(facts)) for v in rng.sample(facts[k][2], 2)]  # each event kind twice
    rng.shuffle(slots)
    conv = Conversation(cid, lang)
    when = datetime(2024, 1, 3, 18, tzinfo=timezone.utc)
    for i in range(n_sessions):
        when += timedelta(days=rng.randint(6, 20))
        events = [(k, v, rng.choice((a, b))) for k, v in slots[2 * i: 2 * i + 2]]
        turns = [(a, rng.choice(GREETING[lang]).format(o=b)), (b, rng.choice(GREETING[lang]).format(o=a))]
        for t in range(rng.randint(6, 10)):
            pool = FILLER[lang] + [x for f in rng.sample(facts, 2) for x in f[3]]
            turns.append(((a, b)[t % 2], rng.choice(pool)))
        for k, v, who in events:
            turns.insert(rng.randrange(2, len(turns) + 1), (who, rng.choice(facts[k][0]).format(v=v)))
        msgs = [_message(cid, f"s{i}-{j}", who, text, when + timedelta(minutes=j)) for j, (who, text) in enumerate(turns)]
        parts = [_opening(lang, when, a, b)] if rng.random() < 0.5 else []
        parts += [FACT_SUMMARY[lang][k].format(s=who, v=v) for k, v, who in events]
        if rng.random() < 0.5:
            parts.append(SMALL_TALK[lang])
        conv.sessions.append(Session(f"{cid}/s{i}", msgs, ("" if lang == "zh" else " ").join(parts)))
    return conv


def _assistant(lang: str, cid: str, rng: random.Random, n_sessions: int) -> Conversation:
    user = rng.choice(NAMES[lang])
    themes, facts = THEMES[lang], FACTS[lang]
    plan = [(ti, v) for ti in range(len(themes)) for v in rng.sample(themes[ti][2], 2)]  # each theme twice
    rng.shuffle(plan)
    conv = Conversation(cid, lang)
    when = datetime(2024, 2, 5, 9, tzinfo=timezone.utc)
    for i, (ti, v) in enumerate(plan[:n_sessions]):
        when += timedelta(days=rng.randint(6, 20))
        k = rng.randrange(len(facts))
        fv = rng.choice(facts[k][2])
        lines = [line.format(v=v) for line in themes[ti][0]] + [rng.choice(facts[k][0]).format(v=fv)]
        rng.shuffle(lines)
        turns: list[tuple[str, str, str]] = []
        for line in lines:
            pad = rng.sample(FILLER[lang], rng.randint(1, 3))
            pad.insert(rng.randrange(len(pad) + 1), line)
            turns.append((user, "user", ("" if lang == "zh" else " ").join(pad)))
            turns.append(("assistant", "assistant", ("" if lang == "zh" else " ").join(rng.sample(REPLIES[lang], 2))))
        msgs = [_message(cid, f"s{i}-{j}", who, text, when + timedelta(minutes=j), role) for j, (who, role, text) in enumerate(turns)]
        parts = [_opening(lang, when, user, {"en": "the assistant", "ru": "ассистент", "zh": "助手"}[lang])] if rng.random() < 0.5 else []
        parts += [THEME_SUMMARY[lang][ti].format(s=user, v=v), FACT_SUMMARY[lang][k].format(s=user, v=fv)]
        conv.sessions.append(Session(f"{cid}/s{i}", msgs, ("" if lang == "zh" else " ").join(parts)))
    return conv


def synthetic_sets(seed: int = 0, per_style: int = 4, sessions: int = 8) -> dict[str, list[Conversation]]:
    rng = random.Random(seed)
    out: dict[str, list[Conversation]] = {}
    for lang in ("en", "ru", "zh"):
        convs = []
        for n in range(per_style):
            convs.append(_chat(lang, f"{lang}-chat-{n}", rng, sessions))
            convs.append(_assistant(lang, f"{lang}-assistant-{n}", rng, sessions))
        out[f"synth-{lang}"] = convs
    return out


# -- pairs ------------------------------------------------------------------------------------------------
@dataclass
class Pair:
    conv: int  # index in the set
    session: int  # the session whose messages score both summaries
    candidate: str  # the summary that should score lower
    kind: str  # "adjacent", "same-chat" or "off-topic"


KINDS = ("adjacent", "same-chat", "off-topic")


def pairs(convs: list[Conversation], rng: random.Random, same_chat: int = 2) -> list[Pair]:
    """Per session: the summaries of the sessions right before and after it (``adjacent``: the story
    goes on, the likeliest mix-up), ``same_chat`` other sessions' summaries of its conversation and
    one summary of another conversation of the set (``off-topic``)."""
    out = []
    for ci, conv in enumerate(convs):
        for si, s in enumerate(conv.sessions):
            usable = [j for j, o in enumerate(conv.sessions) if j != si and o.summary != s.summary]
            near = [j for j in (si - 1, si + 1) if j in usable]
            far = [j for j in usable if j not in near]
            for j in near:
                out.append(Pair(ci, si, conv.sessions[j].summary, "adjacent"))
            for j in rng.sample(far, min(same_chat, len(far))):
                out.append(Pair(ci, si, conv.sessions[j].summary, "same-chat"))
            foreign = [c for k, c in enumerate(convs) if k != ci and c.sessions]
            if foreign:
                out.append(Pair(ci, si, rng.choice(rng.choice(foreign).sessions).summary, "off-topic"))
    return out
