"""The memory as a service: ``layered-memory mcp`` (an MCP server over stdio or streamable HTTP) and
``layered-memory serve`` (an HTTP API with an OpenAPI document, the memory viewer and MCP at ``/mcp``).

Needs the ``serve`` extra (``pip install -e ".[serve]"`` in a clone: the ``mcp`` SDK and ``uvicorn``);
``import layered_memory`` never imports this package.

- ``keys``: bearer keys -> tenant (+ user); ``access``: who may see which users, chats and messages;
- ``mcp_tools`` / ``mcp_server``: the tools and the MCP server; ``routes`` / ``api`` / ``openapi``: the HTTP API;
- ``views``: what the viewer shows; ``static/``: the viewer (plain HTML and a script, no build step).

See docs/mcp.md, docs/serve.md and docs/viewer.md.
"""
