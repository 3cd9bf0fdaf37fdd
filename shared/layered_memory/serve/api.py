"""``layered-memory serve``: the HTTP API (``routes.ROUTES``), its OpenAPI document, the memory viewer
and, at ``/mcp``, the MCP server over streamable HTTP, all behind the same bearer keys.

    app = create_app(mem, KeyRing.load("keys.json"))     # any ASGI server: uvicorn.run(app, host="127.0.0.1")

Each request: the key resolves to a tenant (and user) before anything else (401 otherwise); query and
body are validated against the route's models (422, with the field, the rule and the fix); then the
engine call runs on the key's handle in a worker thread. Errors are JSON ``{"error": {"type",
"message", ...}}`` with a 4xx status from the library's error tree (``status_of``); a refused request
writes nothing (validation happens before the call, and the engine's writes validate before they write).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount
from starlette.routing import Route as StarletteRoute
from starlette.staticfiles import StaticFiles

from ..errors import (
    BackendError, CapabilityError, ConfigurationError, InvalidInputError, LayeredMemoryError, NotFoundError,
)
from .keys import HandleCache, Key, KeyRing
from .mcp_server import KEY_SCOPE, BearerAuth, build_server, key_binding
from .openapi import build_openapi
from .routes import ROUTES, Call, EventsQuery, Forbidden, Params, Route, check_reach

if TYPE_CHECKING:
    from ..agents.monitor import AgentSizeMonitor
    from ..engine import LayeredMemory

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
DEFAULT_MAX_BODY_BYTES = 1_048_576
PUBLIC = ("/", "/healthz", "/openapi.json", "/favicon.ico")
PAGE_HEADERS = {  # the viewer runs only its own script and talks only to this server
    "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
}
DAY = 24 * 3600.0


class BadRequest(Exception):
    """The request itself is malformed (unreadable JSON, not UTF-8)."""


class BodyTooLarge(Exception):
    """The body is over the server's limit."""


STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (BodyTooLarge, 413), (BadRequest, 400), (Forbidden, 403), (NotFoundError, 404), (InvalidInputError, 422),
    (CapabilityError, 400), (ConfigurationError, 400), (BackendError, 503), (LayeredMemoryError, 400),
)


def status_of(exc: BaseException) -> int:
    """The HTTP status of an error (500 for anything outside the library's error tree: a bug)."""
    for cls, status in STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def error_body(exc: BaseException) -> dict[str, Any]:
    err: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, InvalidInputError):
        err.update(field=exc.field, rule=exc.rule, fix=exc.fix)
    return {"error": err}


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    text = json.dumps(data, ensure_ascii=False, default=str)
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate echoed back from the input: escape it instead
        raw = json.dumps(data, ensure_ascii=True, default=str).encode("ascii")
    return Response(raw, status_code=status, media_type="application/json", headers=headers)


def error_response(exc: BaseException) -> Response:
    status = status_of(exc)
    if status == 500:
        logger.exception("serve: unexpected %s", type(exc).__name__, exc_info=exc)
        return json_response({"error": {"type": "InternalError", "message": f"{type(exc).__name__} (see the server log)"}}, 500)
    return json_response(error_body(exc), status)


def _invalid(exc: ValidationError, where: str, route: Route) -> InvalidInputError:
    """A pydantic error as the library's InvalidInputError (the first problem, named by its field)."""
    e = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in e.get("loc", ())) or where
    fix = f"see the {where} of {route.method} {route.path} in /openapi.json"
    return InvalidInputError(loc if where == "query" else f"body.{loc}", e.get("input"), e.get("msg", "is invalid"), fix)


def parse_query(route: Route, request: Request) -> Params | None:
    model = route.query
    items = request.query_params.multi_items()
    if model is None:
        if items:
            raise InvalidInputError(items[0][0], items[0][1], "is not a parameter of this operation", "remove it")
        return None
    data: dict[str, str] = {}
    for name, value in items:
        if name in data:
            raise InvalidInputError(name, value, "is given twice", "pass each parameter once")
        data[name] = value
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc, "query", route) from None


def check_size(request: Request, limit: int) -> None:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"the body has {declared} bytes, over this server's limit of {limit}; send less (or raise --max-body-bytes)")


async def read_body(request: Request, limit: int) -> bytes:
    check_size(request, limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"the body is over this server's limit of {limit} bytes; send less (or raise --max-body-bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_body(route: Route, raw: bytes) -> Params:
    assert route.body is not None
    if not raw.strip():
        raise InvalidInputError("body", "", "is required: a JSON object", f"send the {route.body.__name__} fields as JSON")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadRequest("the body is not UTF-8 text; send JSON encoded as UTF-8") from None
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"the body is not valid JSON ({str(exc)[:120]}); send a JSON object") from None
    if not isinstance(data, dict):
        raise InvalidInputError("body", data, "must be a JSON object", f"send the {route.body.__name__} fields as an object")
    try:
        return route.body.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc, "body", route) from None


class Monitors:
    """One agent size monitor per tenant, checking every ``interval`` while the app runs (``run=True``)."""

    def __init__(self, engine: LayeredMemory, interval: float, run: bool) -> None:
        self.engine, self.interval, self.run = engine, interval, run
        self._monitors: dict[str, AgentSizeMonitor] = {}
        self._tasks: list[asyncio.Task[Any]] = []
        self._lock = threading.Lock()

    def get(self, tenant: str) -> AgentSizeMonitor:
        with self._lock:
            m = self._monitors.get(tenant)
            if m is None:
                m = self._monitors[tenant] = self.engine.tenant(tenant).agents.monitor(interval=self.interval)
            return m

    def start(self, tenants: list[str]) -> None:
        if not self.run:
            return
        for t in tenants:
            try:
                self._tasks.append(asyncio.get_running_loop().create_task(self.get(t).run()))
            except CapabilityError:  # agents need a vector index: nothing to watch
                logger.info("serve: no agent monitor for tenant %s (no vector index)", t)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()


def create_app(
    engine: LayeredMemory, keys: KeyRing, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, mcp: bool = True,
    documents: bool = False, monitor_interval: float = DAY, run_monitor: bool = True, host: str = "127.0.0.1",
    close_engine: bool = False,
) -> Starlette:
    """The ASGI app over ``engine`` (the unbound engine: each key opens its own tenant / user handle).

    Args:
        keys: the bearer keys and what each reaches.
        max_body_bytes: larger bodies get 413 before they are read.
        mcp: serve the MCP server at ``/mcp`` (streamable HTTP, the same keys).
        documents: offer the document tools over MCP (``vector_rag``, ``search_repos``).
        monitor_interval / run_monitor: the agent size check of each key's tenant (every 24 h by default);
            run it in one process only when several workers serve the same store.
        host: the address the server binds (MCP's DNS-rebinding protection allows it as Host).
        close_engine: close ``engine`` when the app shuts down (a worker that opened it for itself).
    """
    handles = HandleCache(engine)
    monitors = Monitors(engine, monitor_interval, run_monitor)
    version = _version()
    spec = build_openapi(ROUTES, version=version)
    mcp_server = build_server(key_binding(handles), documents=documents) if mcp else None

    def endpoint(route: Route) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            key: Key = request.scope[KEY_SCOPE]
            try:
                check_size(request, max_body_bytes)  # a body over the limit is refused unread
                check_reach(key, request.path_params)  # authorization before validation
                query = parse_query(route, request)
                body = parse_body(route, await read_body(request, max_body_bytes)) if route.body is not None else None
                call = Call(key, handles.get(key), dict(request.path_params), query, body, monitors.get)
                if route.run is None:
                    return await event_stream(call)
                data = await anyio.to_thread.run_sync(route.run, call)
            except Exception as exc:
                return error_response(exc)
            return json_response(data, route.status)

        return handle

    async def event_stream(call: Call) -> Response:
        u = await anyio.to_thread.run_sync(call.user)
        limit = call.query.limit if isinstance(call.query, EventsQuery) else None
        stream = monitors.get(u.tenant_id).events(user_id=u.bound_user)

        async def body() -> AsyncIterator[str]:
            sent = 0
            try:
                yield ": connected\n\n"
                while limit is None or sent < limit:
                    try:
                        event = await asyncio.wait_for(stream.__anext__(), timeout=15)
                    except asyncio.TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    yield event.to_sse()
                    sent += 1
            finally:
                await stream.aclose()

        return StreamingResponse(body(), media_type="text/event-stream", headers={"cache-control": "no-cache"})

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"cache-control": "no-cache", **PAGE_HEADERS})

    async def openapi(request: Request) -> Response:
        return json_response(spec)

    async def healthz(request: Request) -> Response:
        return json_response({"ok": True, "version": version, "pid": os.getpid()})  # pid: which worker answered

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = {404: f"no route {request.url.path}; the routes are in /openapi.json",
                   405: f"{request.method} is not allowed on {request.url.path}; see /openapi.json"}.get(status, str(exc))
        return json_response({"error": {"type": "NotFound" if status == 404 else "HTTPError", "message": message}}, status)

    routes: list[BaseRoute] = [
        StarletteRoute("/", index), StarletteRoute("/openapi.json", openapi), StarletteRoute("/healthz", healthz),
        StarletteRoute("/favicon.ico", favicon), Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    routes += [StarletteRoute(r.path, endpoint(r), methods=[r.method], name=r.name) for r in ROUTES]
    if mcp_server is not None:
        mcp_app = mcp_server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, host=host)
        routes += list(mcp_app.routes)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(engine.count_tokens, "warm up")  # the tokenizer loads once (~1.5 s), not on a first viewer
        monitors.start(keys.tenants)
        try:
            if mcp_server is not None:
                async with mcp_server.session_manager.run():
                    yield
            else:
                yield
        finally:
            await monitors.stop()
            if close_engine:
                await anyio.to_thread.run_sync(engine.close)

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: http_error, 405: http_error})
    app.add_middleware(BearerAuthMiddleware, keys=keys)
    app.state.engine = engine
    app.state.keys = keys
    return app


class BearerAuthMiddleware(BearerAuth):
    def __init__(self, app: Any, keys: KeyRing) -> None:
        super().__init__(app, keys, public=PUBLIC, public_prefixes=("/static/",))


def _version() -> str:
    from .mcp_server import _version as v

    return v()


__all__ = ["create_app", "error_body", "status_of"]
