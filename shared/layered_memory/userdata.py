"""User data, task memory and the tasks skill (seed 002), stored as RecordStore documents.

- user data: free fields per user, injected into the context as one system message;
- task memory: tool results by task_id, which feed the query of the vector blocks while a task runs;
- tasks: create / update / complete / list; never injected into the context automatically
  (the model asks for them with the ``list_tasks`` tool).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .errors import InvalidInputError, NotFoundError
from .models import Task, as_input_error, check_id, check_json, iso, parse_time, utcnow

if TYPE_CHECKING:
    from .index import Scope
    from .stores.base import RecordStore

USER_DATA = "user_data"
TASK_MEMORY = "task_memory"
TASKS = "tasks"
TASK_STATUSES = ("open", "in_progress", "done", "cancelled")
MAX_USER_DATA_BYTES = 64_000


class UserData:
    """User data, task memory and tasks of one handle (``mem.set_user_data`` etc. delegate here).

    Args:
        records: the engine's RecordStore. scope: the handle's tenant and bound user; every call acts
            on ``scope.user(user_id)`` (a bound handle reaches only its own user).
    """

    def __init__(self, records: RecordStore, scope: Scope) -> None:
        self._records = records
        self.scope = scope
        self.tenant_id = scope.tenant

    def _user(self, user_id: str | None) -> str:
        return self.scope.user(user_id)

    # -- user data ----------------------------------------------------------------------------
    def set_user_data(self, user_id: str | None, data: Mapping[str, Any], *, merge: bool = True) -> dict[str, Any]:
        """Set fields about a user (name, preferences, ...). ``merge=False`` replaces them all;
        a field set to None is removed. Returns the stored data."""
        user_id = self._user(user_id)
        if not isinstance(data, Mapping):
            raise InvalidInputError("data", data, "must be a mapping of field names to values", "pass a dict")
        check_json("data", data)  # before json.dumps: a deeply nested value would raise RecursionError there
        current = (self.get_user_data(user_id) or {}) if merge else {}
        current.update(data)
        current = {k: v for k, v in current.items() if v is not None}
        try:
            size = len(json.dumps(current, ensure_ascii=False))
        except (TypeError, ValueError):
            raise InvalidInputError("data", data, "values must be JSON-serializable", "use strings, numbers, lists, dicts") from None
        if size > MAX_USER_DATA_BYTES:
            raise InvalidInputError("data", f"{size} bytes", f"user data is limited to {MAX_USER_DATA_BYTES} bytes", "keep only what the prompt needs")
        self._records.put_docs(self.tenant_id, USER_DATA, {user_id: current})
        return current

    def get_user_data(self, user_id: str | None) -> dict[str, Any] | None:
        user_id = self._user(user_id)
        return self._records.get_docs(self.tenant_id, USER_DATA, [user_id])[0] or None

    def delete_user_data(self, user_id: str | None) -> bool:
        user_id = self._user(user_id)
        return self._records.delete_docs(self.tenant_id, USER_DATA, [user_id]) > 0

    # -- task memory --------------------------------------------------------------------------
    # Keys are ``<owner>|<task_id>|<time>|<nonce>``: a task's memory belongs to its user (the handle's
    # bound user, or ``user_id=``); an unbound handle with no user writes the tenant's own space (owner "").
    def _task_prefix(self, task_id: str, user_id: str | None) -> str:
        task_id = check_id("task_id", task_id)  # type: ignore[assignment]
        owner = self.scope.owner(user_id)
        return f"{owner or ''}|{task_id}|"

    def add_tool_result(self, task_id: str, content: str, *, user_id: str | None = None, tool_name: str | None = None) -> dict[str, Any]:
        """Remember a tool result of a running task; the latest ones feed the context's search query.
        The result belongs to ``user_id`` (default: the handle's bound user; a bound handle cannot name another)."""
        prefix = self._task_prefix(task_id, user_id)
        if not isinstance(content, str) or not content.strip():
            raise InvalidInputError("content", content, "must be a non-empty string", "pass the tool's output as text")
        if tool_name is not None and not isinstance(tool_name, str):
            raise InvalidInputError("tool_name", tool_name, "must be a string or None", "pass the tool's name")
        user_id = check_id("user_id", user_id, optional=True)
        now = utcnow()
        owner = prefix.split("|", 1)[0] or None
        item = {"task_id": task_id, "content": content, "tool_name": tool_name, "user_id": owner, "timestamp": iso(now)}
        key = f"{prefix}{now.strftime('%Y%m%dT%H%M%S.%f')}|{uuid.uuid4().hex[:8]}"
        self._records.put_docs(self.tenant_id, TASK_MEMORY, {key: item})
        return item

    def get_task_memory(self, task_id: str, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """Tool results of a task of ``user_id`` (default: the bound user), oldest first."""
        prefix = self._task_prefix(task_id, user_id)
        return [v for _, v in self._records.list_docs(self.tenant_id, TASK_MEMORY, prefix=prefix, limit=10_000)]

    def clear_task_memory(self, task_id: str, *, user_id: str | None = None) -> int:
        prefix = self._task_prefix(task_id, user_id)
        keys = [k for k, _ in self._records.list_docs(self.tenant_id, TASK_MEMORY, prefix=prefix, limit=100_000)]
        return self._records.delete_docs(self.tenant_id, TASK_MEMORY, keys) if keys else 0

    # -- tasks skill --------------------------------------------------------------------------
    def create_task(self, user_id: str | None, title: str, description: str = "", *, due: Any = None, task_id: str | None = None,
                    metadata: Mapping[str, Any] | None = None) -> Task:
        user_id = self._user(user_id)
        if not isinstance(title, str) or not title.strip():
            raise InvalidInputError("title", title, "must be a non-empty string", "give the task a title")
        if not isinstance(description, str):
            raise InvalidInputError("description", description, "must be a string", 'pass "" for none')
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError("metadata", metadata, "must be a dict", 'pass e.g. metadata={"source": "chat"}')
        check_json("metadata", metadata)
        task = Task(
            task_id=check_id("task_id", task_id or uuid.uuid4().hex[:12]), user_id=user_id, title=title.strip(),
            description=description, due=parse_time("due", due) if due is not None else None, metadata=dict(metadata or {}),
        )
        self._records.put_docs(self.tenant_id, TASKS, {f"{user_id}|{task.task_id}": task.model_dump(mode="json")})
        return task

    def get_task(self, user_id: str | None, task_id: str) -> Task:
        user_id = self._user(user_id)
        task_id = check_id("task_id", task_id)  # type: ignore[assignment]
        doc = self._records.get_docs(self.tenant_id, TASKS, [f"{user_id}|{task_id}"])[0]
        if doc is None:
            raise NotFoundError(f"task {task_id!r} of user {user_id!r} does not exist; list_tasks shows the user's tasks")
        return Task.model_validate(doc)

    def update_task(self, user_id: str | None, task_id: str, **changes: Any) -> Task:
        """Change title, description, status (open | in_progress | done | cancelled), due or metadata."""
        task = self.get_task(user_id, task_id)
        allowed = {"title", "description", "status", "due", "metadata"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise InvalidInputError(unknown[0], changes[unknown[0]], f"cannot be changed (allowed: {', '.join(sorted(allowed))})", "remove it")
        if "status" in changes and changes["status"] not in TASK_STATUSES:
            raise InvalidInputError("status", changes["status"], f"must be one of {', '.join(TASK_STATUSES)}", "pick one")
        if changes.get("due") is not None:
            changes["due"] = parse_time("due", changes["due"])
        if "title" in changes and (not isinstance(changes["title"], str) or not changes["title"].strip()):
            raise InvalidInputError("title", changes["title"], "must be a non-empty string", "give the task a title")
        check_json("metadata", changes.get("metadata"))
        data = task.model_dump() | changes | {"update_time": utcnow()}
        try:
            task = Task.model_validate(data)
        except ValidationError as exc:
            raise as_input_error(exc) from None
        self._records.put_docs(self.tenant_id, TASKS, {f"{task.user_id}|{task.task_id}": task.model_dump(mode="json")})
        return task

    def complete_task(self, user_id: str | None, task_id: str) -> Task:
        return self.update_task(user_id, task_id, status="done")

    def list_tasks(self, user_id: str | None, status: str | None = None) -> list[Task]:
        """The user's tasks, oldest first, optionally by status."""
        user_id = self._user(user_id)
        if status is not None and status not in TASK_STATUSES:
            raise InvalidInputError("status", status, f"must be one of {', '.join(TASK_STATUSES)}", "pick one or pass None")
        tasks = [Task.model_validate(v) for _, v in self._records.list_docs(self.tenant_id, TASKS, prefix=f"{user_id}|", limit=10_000)]
        tasks.sort(key=lambda t: t.create_time)
        return [t for t in tasks if status is None or t.status == status]
