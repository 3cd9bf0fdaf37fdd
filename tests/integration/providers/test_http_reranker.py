"""``HTTPReranker`` against a real HTTP server on a free loopback port, in the answer shapes of the rerank APIs it
names (Cohere / Jina / vLLM / Infinity ``results``, Voyage ``data``, text-embeddings-inference's bare list and
``texts`` field, a ``top_n`` answer), and a search that keeps its own order when the service errs, stalls or is gone.
The scorer behind the server is word overlap: no rerank model runs here (no model hub)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from layered_memory import LayeredMemory
from layered_memory.errors import BackendTimeout, BackendUnavailable
from layered_memory.providers import HTTPReranker, RerankerError


def _overlap(query: str, doc: str) -> float:
    return float(len(set(query.lower().split()) & set(doc.lower().split())) + 3 * ("golf" in doc.lower()))


class RerankServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((self.path, dict(self.headers), body))
                try:
                    server.answer(self, self.path, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def answer(self, h: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        if path == "/slow":
            time.sleep(1.0)
        if path == "/error":
            return self.send(h, 500, {"message": "model not loaded"})
        docs = body.get("texts") if path == "/tei/rerank" else body["documents"]
        rows = sorted(({"index": i, "relevance_score": _overlap(body["query"], d)} for i, d in enumerate(docs)),
                      key=lambda r: -r["relevance_score"])
        if path == "/top1":
            rows = rows[:1]
        if path == "/tei/rerank":
            return self.send(h, 200, [{"index": r["index"], "score": r["relevance_score"]} for r in rows])
        if path == "/voyage":
            return self.send(h, 200, {"object": "list", "data": rows, "model": body.get("model")})
        if path == "/broken":
            return self.send(h, 200, {"results": [{"index": 99, "relevance_score": 1.0}]})
        return self.send(h, 200, {"id": "r1", "results": rows, "meta": {"billed_units": {"search_units": 1}}})

    @staticmethod
    def send(h: BaseHTTPRequestHandler, code: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[RerankServer]:
    s = RerankServer()
    yield s
    s.close()


DOCS = ["the car wash is closed", "I drive an old Golf", "my car needs new brakes"]


def test_the_answer_shapes_of_the_rerank_apis(server):
    cohere = HTTPReranker(f"{server.url}/v2/rerank", model="rerank-v3.5", api_key="secret")
    assert cohere.rerank("which car", DOCS) == [1.0, 3.0, 1.0]
    path, headers, body = server.requests[-1]
    assert path == "/v2/rerank" and headers["Authorization"] == "Bearer secret"
    assert body == {"query": "which car", "documents": DOCS, "model": "rerank-v3.5"}
    tei = HTTPReranker(f"{server.url}/tei/rerank", documents_field="texts")
    assert tei.rerank("which car", DOCS) == [1.0, 3.0, 1.0] and "model" not in server.requests[-1][2]
    assert HTTPReranker(f"{server.url}/voyage", model="rerank-2").rerank("which car", DOCS) == [1.0, 3.0, 1.0]
    for r in (cohere, tei):
        r.close()


def test_a_top_n_answer_ranks_the_rest_after(server):
    scores = HTTPReranker(f"{server.url}/top1").rerank("which car", DOCS)  # a server that answers its best one only
    assert max(range(3), key=lambda i: scores[i]) == 1 and scores[0] > scores[2]  # the rest keep the engine's order


def test_errors_name_the_service_and_what_went_wrong(server):
    with pytest.raises(RerankerError, match="HTTP 500: .*model not loaded"):
        HTTPReranker(f"{server.url}/error").rerank("q", DOCS)
    with pytest.raises(RerankerError, match="without a valid index and score"):
        HTTPReranker(f"{server.url}/broken").rerank("q", DOCS)
    with pytest.raises(BackendTimeout, match="did not answer in 0.2 s"):
        HTTPReranker(f"{server.url}/slow", timeout=0.2).rerank("q", DOCS)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    with pytest.raises(BackendUnavailable, match="is not reachable"):
        HTTPReranker(f"http://127.0.0.1:{port}/rerank").rerank("q", DOCS)


def _turns() -> list[dict[str, Any]]:
    t0 = datetime(2024, 3, 1, 9, tzinfo=timezone.utc)
    texts = ["my car needs new brakes", "the car repair quote was high", "I drive an old Golf", "the car wash is closed"]
    return [{"message_id": f"m{i}", "chat_id": "c1", "user_id": "u1", "content": t, "create_time": t0 + timedelta(minutes=i)}
            for i, t in enumerate(texts)]


def test_a_search_reads_the_service_and_keeps_its_order_when_it_fails(server, tmp_path):
    with LayeredMemory.embedded(tmp_path / "a", embedder="none", rerank_model=f"rerank-v3.5@{server.url}/v2/rerank") as mem:
        mem.add_messages(_turns())
        got = mem.search("what car do I have", k=2)
    assert got.hits[0].id == "m2" and got.rerank_error is None
    assert server.requests[-1][2]["model"] == "rerank-v3.5"
    with LayeredMemory.embedded(tmp_path / "b", embedder="none") as mem:
        mem.add_messages(_turns())
        plain = [h.id for h in mem.search("what car do I have", k=2).hits]
    for path in ("/error", "/slow"):
        with LayeredMemory.embedded(tmp_path / path.strip("/"), embedder="none",
                                    rerank_model=HTTPReranker(f"{server.url}{path}", timeout=0.3)) as mem:
            mem.add_messages(_turns())
            got = mem.search("what car do I have", k=2)
        assert [h.id for h in got.hits] == plain
        assert got.rerank_error.startswith("RerankerError" if path == "/error" else "BackendTimeout")
