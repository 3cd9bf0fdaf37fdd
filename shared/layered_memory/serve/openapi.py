"""The OpenAPI 3.1 document of ``serve``'s routes, built from the route table (``routes.ROUTES``): the
parameter and body models give the schemas, so the document cannot drift from what the server checks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .routes import Route

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {
        "type": "object",
        "required": ["type", "message"],
        "properties": {
            "type": {"type": "string", "description": "The error's class in layered_memory.errors (or Unauthorized, Forbidden)"},
            "message": {"type": "string", "description": "What is wrong, the rule and the fix"},
            "field": {"type": "string"}, "rule": {"type": "string"}, "fix": {"type": "string"},
        },
    }},
}
ERRORS = {
    "400": "Malformed request (bad JSON) or an operation this server cannot do",
    "401": "Missing or unknown bearer key",
    "403": "The key may not reach this user or operation",
    "404": "No such record visible to this key",
    "413": "Body over the server's limit",
    "422": "A value breaks a rule (InvalidInputError: field, rule, fix)",
}
REF = "#/components/schemas/{model}"


def _error_responses(route: Route) -> dict[str, Any]:
    codes = ["400", "401", "403", "404", "422"] + (["413"] if route.body is not None else [])
    return {c: {"description": ERRORS[c], "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}}}
            for c in sorted(codes)}


def build_openapi(routes: Sequence[Route], *, title: str = "layered-memory", version: str = "0") -> dict[str, Any]:
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    paths: dict[str, dict[str, Any]] = {}
    for r in routes:
        params: list[dict[str, Any]] = [
            {"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in re.findall(r"{(\w+)}", r.path)
        ]
        if r.query is not None:
            q = r.query.model_json_schema(ref_template=REF)
            for name, prop in q.get("properties", {}).items():
                p = {"name": name, "in": "query", "required": name in q.get("required", []), "schema": prop}
                if "description" in prop:
                    p["description"] = prop["description"]
                params.append(p)
        ok_type = "text/event-stream" if r.run is None else "application/json"
        op: dict[str, Any] = {
            "operationId": r.name, "summary": r.summary, "tags": list(r.tags), "security": [{"bearer": []}],
            "parameters": params,
            "responses": {str(r.status): {"description": "OK", "content": {ok_type: {"schema": {"type": "object"} if r.run else {"type": "string"}}}},
                          **_error_responses(r)},
        }
        if r.body is not None:
            body = r.body.model_json_schema(ref_template=REF)
            schemas.update(body.pop("$defs", {}))
            schemas[r.body.__name__] = body
            op["requestBody"] = {"required": True, "content": {"application/json": {"schema": {"$ref": REF.format(model=r.body.__name__)}}}}
        paths.setdefault(r.path, {})[r.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version, "description": (
            "Memory of LLM chat bots and agents over HTTP. Every request carries Authorization: Bearer <key>; the key "
            "maps to a tenant (and optionally one user) in the server's keys file, and everything runs in that scope.")},
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


__all__ = ["build_openapi"]
