"""Agent context store behind a small Starlette app, with size warnings pushed over Server-Sent Events.

    pip install starlette uvicorn
    python examples/agent_sse.py                # http://127.0.0.1:8000, data in ./agent_sse_data

    curl -X POST localhost:8000/agents/123/coder -d '{"max_vectors": 10}'
    curl -N localhost:8000/agents/123/events    # stays open: size_warning / auto_pruned events
    curl -X POST localhost:8000/agents/123/coder/interactions -d '{"text": "ran pytest", "interaction_type": "tool_call"}'
    curl -X POST localhost:8000/agents/check    # run the size check now (it also runs every 24 h)

The monitor (``mem.agents.monitor()``) runs as an asyncio task for the app's lifetime; each browser tab
subscribes with ``monitor.events(user_id=...)`` and gets its user's events as ``text/event-stream``.
Exercised by ``tests/unit/agents/test_agents_manage.py::test_sse_example_streams_size_warning``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from layered_memory.engine import LayeredMemory
from layered_memory.errors import InvalidInputError, LayeredMemoryError, NotFoundError


def create_app(mem: LayeredMemory, *, interval: float = 24 * 3600) -> Starlette:
    """A Starlette app over ``mem``; the size monitor checks every ``interval`` seconds."""
    monitor = mem.agents.monitor(interval=interval)

    async def create_agent(request: Request) -> JSONResponse:
        body = await _json(request)
        p = request.path_params
        agent = await mem.agents.acreate(p["user_id"], p["agent_name"], max_vectors=body.get("max_vectors"),
                                         collection_mode=body.get("collection_mode"))
        return JSONResponse(agent.info.to_doc())

    async def add_interaction(request: Request) -> JSONResponse:
        p = request.path_params
        agent = await mem.agents.aget(p["user_id"], p["agent_name"])
        items = await agent.aadd_interactions([await _json(request)])
        return JSONResponse(items[0].to_doc(), status_code=201)

    async def search(request: Request) -> JSONResponse:
        p, q = request.path_params, request.query_params
        agent = await mem.agents.aget(p["user_id"], p["agent_name"])
        result = await agent.asearch(q.get("q", ""), k=int(q.get("k", 10)))
        return JSONResponse(result.to_dict())

    async def stats(request: Request) -> JSONResponse:
        p = request.path_params
        agent = await mem.agents.aget(p["user_id"], p["agent_name"])
        return JSONResponse(await agent.astats(period_days=7))

    async def check(request: Request) -> JSONResponse:
        events = await monitor.acheck_once()
        return JSONResponse([e.to_dict() for e in events])

    async def events(request: Request) -> StreamingResponse:
        user_id = request.path_params["user_id"]
        limit = int(request.query_params.get("limit", 0)) or None
        stream = monitor.events(user_id=user_id)  # subscribed from here on

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

        return StreamingResponse(body(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(monitor.run())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    app = Starlette(
        routes=[
            Route("/agents/check", check, methods=["POST"]),
            Route("/agents/{user_id}/events", events),
            Route("/agents/{user_id}/{agent_name}", create_agent, methods=["POST"]),
            Route("/agents/{user_id}/{agent_name}/interactions", add_interaction, methods=["POST"]),
            Route("/agents/{user_id}/{agent_name}/search", search),
            Route("/agents/{user_id}/{agent_name}/stats", stats),
        ],
        exception_handlers={LayeredMemoryError: _error},
        lifespan=lifespan,
    )
    app.state.monitor = monitor
    return app


async def _json(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        data = json.loads(raw or b"{}")
    except json.JSONDecodeError as exc:
        raise InvalidInputError("body", raw[:60], f"is not JSON ({exc.msg})", "send a JSON object") from None
    if not isinstance(data, dict):
        raise InvalidInputError("body", data, "must be a JSON object", "send a JSON object")
    return data


async def _error(request: Request, exc: Exception) -> JSONResponse:
    status = 404 if isinstance(exc, NotFoundError) else 400 if isinstance(exc, InvalidInputError) else 500
    return JSONResponse({"error": type(exc).__name__, "detail": str(exc)}, status_code=status)


if __name__ == "__main__":  # pragma: no cover
    import uvicorn

    memory = LayeredMemory.embedded(os.environ.get("AGENT_SSE_DATA", "agent_sse_data"))
    uvicorn.run(create_app(memory, interval=float(os.environ.get("AGENT_SSE_INTERVAL", 24 * 3600))), port=8000)
