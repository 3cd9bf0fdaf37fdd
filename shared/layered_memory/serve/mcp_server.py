"""``layered-memory mcp``: the memory as an MCP server (the official ``mcp`` SDK's low-level ``Server``).

Two transports:

- **stdio** (a desktop agent starts the command): the server is bound at start to one tenant and,
  optionally, one user (``--tenant`` / ``--user``, or ``LAYERED_MEMORY_TENANT`` / ``LAYERED_MEMORY_SERVE__USER``);
- **streamable HTTP** (``--transport http``): every request carries ``Authorization: Bearer <key>``; the keys
  file maps the key to a tenant (and user). An unknown key gets 401 before any MCP message is read.

The tools are ``mcp_tools.tool_specs``; each call runs on the caller's handle
(``mem.tenant(t).for_user(u)``), so the engine's scope rule is the only thing deciding what a client
sees. A tool failure is a tool result with ``is_error`` (the seed's texts), never a crashed server.

    server = build_server(fixed_binding(mem.tenant("acme").for_user("anna")))
    async with mcp.client.Client(server) as client:            # in process (tests)
        await client.call_tool("qdrant_search_memory", {"query_text": "Lisbon"})
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from .keys import HandleCache, Key, KeyRing
from .mcp_tools import Outcome, ToolSpec, call_tool, to_json, tool_specs

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

    from ..engine import LayeredMemory

logger = logging.getLogger(__name__)

SERVER_NAME = "layered-memory"
INSTRUCTIONS = (
    "Long-term memory of conversations: search what was said (qdrant_search_memory, search, quick_search, topic_search), "
    "get the memory context of a chat (get_context), store messages (add_message) and manage the user's tasks."
)
KEY_SCOPE = "layered_memory.key"  # where the HTTP auth middleware leaves the caller's Key in the ASGI scope

#: A binding turns a request into the handle it runs on (None: refused).
Binding = Callable[[Any], "LayeredMemory | None"]


def fixed_binding(handle: LayeredMemory) -> Binding:
    """Every request runs on ``handle`` (stdio, in-process)."""
    return lambda ctx: handle


def key_binding(handles: HandleCache) -> Binding:
    """The handle of the bearer key the HTTP middleware resolved for this request."""

    def resolve(ctx: Any) -> LayeredMemory | None:
        request = getattr(ctx, "request", None)
        key = request.scope.get(KEY_SCOPE) if request is not None else None
        return handles.get(key) if isinstance(key, Key) else None

    return resolve


def build_server(binding: Binding, *, documents: bool = False) -> Server[Any]:
    """The MCP server over the handle ``binding`` gives each request (see ``tool_specs`` for the tools)."""
    by_scope: dict[bool, dict[str, ToolSpec]] = {
        bound: {s.name: s for s in tool_specs(bound=bound, documents=documents)} for bound in (True, False)
    }

    def specs_for(h: LayeredMemory) -> dict[str, ToolSpec]:
        return by_scope[h.bound_user is not None]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        h = binding(ctx)
        specs = specs_for(h) if h is not None else {}
        return types.ListToolsResult(tools=[
            types.Tool(name=s.name, description=s.description, input_schema=s.input_schema()) for s in specs.values()
        ])

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        h = binding(ctx)
        if h is None:
            return _result(Outcome("Error: this request carries no valid key", {"error": "unauthorized"}, True))
        spec = specs_for(h).get(params.name)
        if spec is None:
            names = ", ".join(specs_for(h))
            return _result(Outcome(f"Error: unknown tool {params.name!r}; the tools are {names}", {"error": "unknown tool"}, True))
        outcome = await anyio.to_thread.run_sync(call_tool, h, spec, params.arguments)
        return _result(outcome)

    return Server(SERVER_NAME, version=_version(), instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call)


def _result(outcome: Outcome) -> types.CallToolResult:
    data = outcome.data
    if data is not None and not isinstance(data, dict):  # structured content is a JSON object before protocol 2026-07-28
        data = {"result": data}
    if data is not None:
        data = json.loads(to_json(data))  # datetimes and the like as the wire carries them
    return types.CallToolResult(content=[types.TextContent(text=outcome.text)], structured_content=data, is_error=outcome.is_error)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("layered-memory")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        return "0"


# -- transports ----------------------------------------------------------------------------------------
async def run_stdio(server: Server[Any]) -> None:
    """Serve one client over this process's stdin/stdout until it closes them."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


class BearerAuth:
    """ASGI middleware: a request without a known ``Authorization: Bearer <key>`` gets a JSON 401 and never
    reaches the app; a known key is left in the scope (``KEY_SCOPE``) for the handlers."""

    def __init__(self, app: ASGIApp, keys: KeyRing, *, public: tuple[str, ...] = (), public_prefixes: tuple[str, ...] = ()) -> None:
        self.app = app
        self.keys = keys
        self.public = public  # paths served without a key (the viewer's page, the OpenAPI document)
        self.public_prefixes = public_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path in self.public or path.startswith(self.public_prefixes):
            await self.app(scope, receive, send)
            return
        key = self.keys.resolve(bearer_token(scope))
        if key is None:
            await send_json(send, 401, {"error": {"type": "Unauthorized", "message": (
                "this request needs Authorization: Bearer <key> with a key from the server's keys file; "
                "create one with: layered-memory keys add FILE --tenant NAME")}}, {"www-authenticate": 'Bearer realm="layered-memory"'})
            return
        scope[KEY_SCOPE] = key
        await self.app(scope, receive, send)


def bearer_token(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


async def send_json(send: Send, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
    raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    head += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": raw})


def http_app(engine: LayeredMemory, keys: KeyRing, *, documents: bool = False, host: str = "127.0.0.1",
             path: str = "/mcp") -> Starlette:
    """The MCP server over streamable HTTP at ``path``, behind ``BearerAuth`` (stateless: any worker answers
    any request, so several workers can serve it behind one address)."""
    server = build_server(key_binding(HandleCache(engine)), documents=documents)
    app = server.streamable_http_app(streamable_http_path=path, stateless_http=True, host=host)
    app.add_middleware(BearerAuthMiddleware, keys=keys)
    return app


class BearerAuthMiddleware(BearerAuth):
    """``BearerAuth`` with Starlette's ``add_middleware(cls, **options)`` signature."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        super().__init__(app, keys)


__all__ = ["BearerAuth", "HandleCache", "build_server", "fixed_binding", "http_app", "key_binding", "run_stdio"]
