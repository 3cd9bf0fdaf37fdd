"""Time expressions in queries (en / ru / zh, and es / pt / fr / de / it), resolved to a UTC window against an anchor time.

    resolve_time("what did I cook last week?", now)      -> TimeWindow(Mon of last week, Sun 23:59:59)
    resolve_time("что я ел вчера", now)                   -> yesterday
    resolve_time("上个月我们聊了什么", now)                  -> last calendar month
    resolve_time("What happened on 7 July, 2023?", now)   -> that day
    resolve_time("When did we go camping in June?", now)  -> the latest June that is not after ``now``

Rules, no model and no dependency: ``dateparser`` (pip, offline) parses a date string well but
does not find a relative expression inside a question without many false positives
(``search_dates`` turns "may", "march", "second" and bare numbers into dates) and costs tens of
milliseconds per call; a search path has a 2 ms budget. The rules below cover the forms chat
questions use: yesterday / today / N days|weeks|months|years ago / last|this week|month|year|weekend /
a month name with or without a day and year / a year; вчера / позавчера / на прошлой неделе /
в прошлом месяце / N дней назад / в мае 2023; 昨天 / 前天 / 上周 / 上个月 / 去年 / N天前 / 2023年5月7日; and in
Spanish, Portuguese, French, German and Italian a month name with a year, a day or a preposition ("en marzo
de 2024", "im März 2024", "7 de maio", "en mars"), yesterday / today (ayer, gestern, ontem, ieri, hoy...)
and last / this week, month, year, weekend ("la semana pasada", "letzten Monat", "le mois dernier"). French
"hier" is left out: it is German for "here".
The first expression found wins; nothing found gives ``None`` (no time signal).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

__all__ = ["TimeWindow", "resolve_time"]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    start: datetime
    end: datetime  # inclusive
    expression: str

    def distance(self, t: datetime) -> float:
        """0 inside the window, else the gap in units of the window's width (at least one day)."""
        if self.start <= t <= self.end:
            return 0.0
        width = max((self.end - self.start).total_seconds(), 86_400.0)
        gap = (self.start - t).total_seconds() if t < self.start else (t - self.end).total_seconds()
        return gap / width


_EN_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_EN_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_EN_MONTHS.pop("may", None)
_EN_MONTHS["may"] = 5
_RU_MONTHS = {
    "январ": 1, "феврал": 2, "март": 3, "апрел": 4, "ма": 5, "июн": 6, "июл": 7, "август": 8,
    "сентябр": 9, "октябр": 10, "ноябр": 11, "декабр": 12,
}
_LATIN_MONTHS = {  # Spanish, Portuguese, French, German, Italian (the names English shares are English's)
    "enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8, "septiembre": 9, "setiembre": 9,
    "octubre": 10, "noviembre": 11, "diciembre": 12, "janeiro": 1, "fevereiro": 2, "março": 3, "maio": 5, "junho": 6, "julho": 7,
    "setembro": 9, "outubro": 10, "novembro": 11, "dezembro": 12, "janvier": 1, "février": 2, "mars": 3, "avril": 4, "mai": 5,
    "juin": 6, "juillet": 7, "août": 8, "septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12, "januar": 1, "jänner": 1,
    "februar": 2, "märz": 3, "juni": 6, "juli": 7, "oktober": 10, "dezember": 12, "gennaio": 1, "febbraio": 2, "aprile": 4,
    "maggio": 5, "giugno": 6, "luglio": 7, "settembre": 9, "ottobre": 10, "dicembre": 12,
}
_LATIN_DAYS_BACK = {"anteayer": 2, "antier": 2, "ayer": 1, "hoy": 0, "anteontem": 2, "ontem": 1, "hoje": 0, "avant-hier": 2,
                    "aujourd'hui": 0, "vorgestern": 2, "gestern": 1, "heute": 0, "l'altro ieri": 2, "ieri": 1, "oggi": 0}
_LATIN_UNITS = {"semana": "w", "semaine": "w", "woche": "w", "settimana": "w", "mes": "m", "mês": "m", "mois": "m", "monat": "m",
                "mese": "m", "año": "y", "ano": "y", "année": "y", "an": "y", "jahr": "y", "anno": "y", "fin de semana": "weekend",
                "fim de semana": "weekend", "week-end": "weekend", "wochenende": "weekend", "fine settimana": "weekend"}
_UNITS = {
    "day": "d", "days": "d", "week": "w", "weeks": "w", "month": "m", "months": "m", "year": "y", "years": "y",
    "день": "d", "дня": "d", "дней": "d", "неделю": "w", "недели": "w", "недель": "w", "месяц": "m", "месяца": "m",
    "месяцев": "m", "год": "y", "года": "y", "лет": "y", "天": "d", "日": "d", "周": "w", "星期": "w", "个星期": "w",
    "个月": "m", "月": "m", "年": "y",
}
_EN_NUM = {"one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "couple of": 2, "few": 3}
_RU_NUM = {"один": 1, "одну": 1, "два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5, "шесть": 6, "семь": 7, "пару": 2, "несколько": 3}
_ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "几": 3}


def _day(d: datetime) -> tuple[datetime, datetime]:
    start = d.replace(hour=0, minute=0, second=0, microsecond=0)
    return start, start + timedelta(days=1) - timedelta(microseconds=1)


def _week(d: datetime) -> tuple[datetime, datetime]:
    start = _day(d)[0] - timedelta(days=d.weekday())
    return start, start + timedelta(days=7) - timedelta(microseconds=1)


def _weekend(now: datetime, back: int) -> tuple[datetime, datetime]:
    """Saturday and Sunday of the week ``back`` weeks before ``now``'s."""
    sat = _week(now - timedelta(weeks=back))[0] + timedelta(days=5)
    return sat, sat + timedelta(days=2) - timedelta(microseconds=1)


def _month(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    last = calendar.monthrange(year, month)[1]
    return start, datetime(year, month, last, tzinfo=timezone.utc) + timedelta(days=1) - timedelta(microseconds=1)


def _year(year: int) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1, tzinfo=timezone.utc), datetime(year + 1, 1, 1, tzinfo=timezone.utc) - timedelta(microseconds=1)


def _shift_months(now: datetime, months: int) -> tuple[int, int]:
    idx = now.year * 12 + (now.month - 1) - months
    return idx // 12, idx % 12 + 1


def _ago(now: datetime, n: int, unit: str) -> tuple[datetime, datetime]:
    if unit == "d":
        return _day(now - timedelta(days=n))
    if unit == "w":
        return _week(now - timedelta(weeks=n))
    if unit == "m":
        return _month(*_shift_months(now, n))
    return _year(now.year - n)


def _month_window(now: datetime, month: int, year: int | None, day: int | None) -> tuple[datetime, datetime] | None:
    if year is None:  # the latest such month not after now
        year = now.year if month <= now.month else now.year - 1
    if not 1900 <= year <= 2200:
        return None
    if day is not None:
        if not 1 <= day <= calendar.monthrange(year, month)[1]:
            return None
        return _day(datetime(year, month, day, tzinfo=timezone.utc))
    return _month(year, month)


def _num(token: str, table: dict[str, int]) -> int | None:
    token = token.strip().lower()
    if token.isdigit():
        return int(token)
    return table.get(token)


_EN_MONTH_RE = "|".join(sorted(_EN_MONTHS, key=len, reverse=True))
_LATIN_MONTH_RE = "|".join(sorted(_LATIN_MONTHS, key=len, reverse=True))
_LATIN_REL_RE = "|".join(sorted(_LATIN_DAYS_BACK, key=len, reverse=True))
_LATIN_YEAR = r"(?:\s+(?:de\s+|del\s+)?(\d{4}))"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # absolute: "7 July, 2023", "July 7, 2023", "July 2023", "in June", "2023-07-07", 2023年7月7日, "7 июля 2023"
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "iso"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_EN_MONTH_RE})\.?,?\s*(\d{{4}})?\b", re.I), "en_dmy"),
    (re.compile(rf"\b({_EN_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s*(\d{{4}}))?\b", re.I), "en_mdy"),
    (re.compile(rf"\b(?:in|during|of|since|from|by)\s+(?:early\s+|late\s+|mid-?)?({_EN_MONTH_RE})\.?(?:,?\s*(\d{{4}}))?\b", re.I), "en_my"),
    (re.compile(rf"\b({_EN_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.I), "en_my"),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?"), "zh_ymd"),
    (re.compile(r"(?<![\d年])(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), "zh_md"),
    (re.compile(r"(?:(\d{1,2})\s+)?(?<![а-яё])(январ[ьяе]|феврал[ьяе]|март[ае]?|апрел[ьяе]|ма[йяе]|июн[ьяе]|июл[ьяе]|"
                r"август[ае]?|сентябр[ьяе]|октябр[ьяе]|ноябр[ьяе]|декабр[ьяе])(?![а-яё])(?:\s+(\d{4}))?", re.I), "ru_dmy"),
    (re.compile(rf"\b(\d{{1,2}})\.?\s+(?:de\s+)?({_LATIN_MONTH_RE})\b{_LATIN_YEAR}?", re.I), "latin_dmy"),
    (re.compile(rf"\b(?:(?:en|em|im|nel|a|au|desde|seit|durante|depuis|ab)\s+(?:mois\s+d[e']\s*)?)?({_LATIN_MONTH_RE})\b{_LATIN_YEAR}", re.I), "latin_my"),
    (re.compile(rf"\b(?:en|em|im|nel|au|desde|seit|durante|depuis)\s+(?:mois\s+d[e']\s*)?({_LATIN_MONTH_RE})\b()", re.I), "latin_my"),
    # relative
    (re.compile(r"\b(day before yesterday)\b", re.I), "en_rel"),
    (re.compile(r"\b(yesterday|today|tonight|this morning)\b", re.I), "en_rel"),
    (re.compile(r"\b(\d+|one|two|three|four|five|six|seven|a|an|a couple of|a few)\s+(days?|weeks?|months?|years?)\s+ago\b", re.I), "en_ago"),
    (re.compile(r"\b(last|past|previous|this|current)\s+(week|weekend|month|year)\b", re.I), "en_last"),
    (re.compile(r"(позавчера|вчера|сегодня)", re.I), "ru_rel"),
    (re.compile(r"(\d+|один|одну|два|две|три|четыре|пять|шесть|семь|пару|несколько)\s+"
                r"(день|дня|дней|неделю|недели|недель|месяц|месяца|месяцев|год|года|лет)\s+назад", re.I), "ru_ago"),
    (re.compile(r"(?:на|в|за)\s+(прошл|эт|текущ)[а-я]*\s+(недел|месяц|год|выходн)[а-я]*", re.I), "ru_last"),
    (re.compile(rf"(?<![\w'-])({_LATIN_REL_RE})\b", re.I), "latin_rel"),
    (re.compile(r"\b(?:la\s+|el\s+|le\s+|l'|il\s+)?(semana|mes|año|fin de semana|semaine|mois|année|an|week-end|settimana|mese|anno|fine settimana|"
                r"mês|ano|fim de semana)\s+(pasad[oa]|passad[oa]|derni(?:er|ère)|scors[oa])\b", re.I), "latin_last"),
    (re.compile(r"\b(?:letzte[nrs]?|vergangene[nrs]?)\s+(woche|monat|jahr|wochenende)\b", re.I), "latin_last"),
    (re.compile(r"\b(?:esta|este|cette|ce|diese[nrs]?|questa|questo)\s+(semana|mes|mês|año|ano|fin de semana|fim de semana|semaine|mois|"
                r"année|week-end|woche|monat|jahr|wochenende|settimana|mese|anno)\b", re.I), "latin_this"),
    (re.compile(r"(前天|昨天|今天|昨晚|今晚)"), "zh_rel"),
    (re.compile(r"(\d+|[一两二三四五六七八九十几])\s*(个星期|星期|周|个月|天|年)前"), "zh_ago"),
    (re.compile(r"(上上|上|这|本|今|去|前)\s*(个?星期|周|个?月|年)"), "zh_last"),
    (re.compile(r"(?<!\d)(\d{4})\s*年(?!\s*\d{1,2}\s*月)"), "year"),
    (re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b(?![-/.]\d)", re.I), "year"),
]


def _resolve(kind: str, m: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    g = m.groups()
    if kind == "iso":
        try:
            return _day(datetime(int(g[0]), int(g[1]), int(g[2]), tzinfo=timezone.utc))
        except ValueError:
            return None
    if kind == "en_dmy":
        return _month_window(now, _EN_MONTHS[g[1].lower()], int(g[2]) if g[2] else None, int(g[0]))
    if kind == "en_mdy":
        return _month_window(now, _EN_MONTHS[g[0].lower()], int(g[2]) if g[2] else None, int(g[1]))
    if kind == "en_my":
        return _month_window(now, _EN_MONTHS[g[0].lower()], int(g[1]) if g[1] else None, None)
    if kind == "zh_ymd":
        if not 1 <= int(g[1]) <= 12:
            return None
        return _month_window(now, int(g[1]), int(g[0]), int(g[2]) if g[2] else None)
    if kind == "zh_md":
        return _month_window(now, int(g[0]), None, int(g[1])) if 1 <= int(g[0]) <= 12 else None
    if kind == "ru_dmy":
        word = g[1].lower()
        month = next((n for stem, n in _RU_MONTHS.items() if word.startswith(stem) and (stem != "ма" or len(word) == 3)), None)
        if month is None:
            return None
        return _month_window(now, month, int(g[2]) if g[2] else None, int(g[0]) if g[0] else None)
    if kind in ("latin_dmy", "latin_my"):
        month = _LATIN_MONTHS[g[1 if kind == "latin_dmy" else 0].lower()]
        year = g[2] if kind == "latin_dmy" else g[1]
        return _month_window(now, month, int(year) if year else None, int(g[0]) if kind == "latin_dmy" else None)
    if kind == "latin_rel":
        return _day(now - timedelta(days=_LATIN_DAYS_BACK[g[0].lower()]))
    if kind in ("latin_last", "latin_this"):
        unit = _LATIN_UNITS[" ".join(g[0].lower().split())]
        back = 1 if kind == "latin_last" else 0
        if unit == "weekend":
            return _weekend(now, back)
        return _ago(now, back, unit)
    if kind in ("en_rel", "ru_rel", "zh_rel"):
        w = g[0].lower()
        back = 2 if w in ("day before yesterday", "позавчера", "前天") else 1 if w in ("yesterday", "вчера", "昨天", "昨晚") else 0
        return _day(now - timedelta(days=back))
    if kind in ("en_ago", "ru_ago", "zh_ago"):
        table = _EN_NUM if kind == "en_ago" else _RU_NUM if kind == "ru_ago" else _ZH_NUM
        n = _num(g[0], table)
        unit = _UNITS.get(g[1].lower()) or _UNITS.get(g[1].lower().rstrip("s"))
        return _ago(now, n, unit) if n is not None and unit else None
    if kind == "en_last":
        back = 0 if g[0].lower() in ("this", "current") else 1
        unit = g[1].lower()
        if unit == "weekend":
            return _weekend(now, back)
        return _ago(now, back, unit[0])
    if kind == "ru_last":
        back = 1 if g[0].lower().startswith("прошл") else 0
        unit = {"недел": "w", "месяц": "m", "год": "y", "выходн": "weekend"}[g[1].lower()]
        if unit == "weekend":
            return _weekend(now, back)
        return _ago(now, back, unit)
    if kind == "zh_last":
        back = {"上上": 2, "上": 1, "去": 1, "前": 2, "这": 0, "本": 0, "今": 0}[g[0]]
        unit = "w" if "周" in g[1] or "星期" in g[1] else "m" if "月" in g[1] else "y"
        if g[0] in ("去", "前", "今") and unit != "y":
            return None
        return _ago(now, back, unit)
    if kind == "year":
        return _year(int(g[0])) if 1900 <= int(g[0]) <= 2200 else None
    return None


def resolve_time(query: str, now: datetime) -> TimeWindow | None:
    """The window of the first time expression in ``query``, relative to ``now`` (aware; naive means UTC)."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    best: tuple[int, TimeWindow] | None = None
    for pattern, kind in _PATTERNS:
        for m in pattern.finditer(query):
            window = _resolve(kind, m, now)
            if window is not None:
                if best is None or m.start() < best[0]:
                    best = (m.start(), TimeWindow(window[0], window[1], m.group(0)))
                break
    return best[1] if best else None
