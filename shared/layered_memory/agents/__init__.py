"""Agent context store (seed 004): ``mem.agents`` -> ``Agents``; ``Agents.create(...)`` -> ``Agent``.

Re-exports only; see ``api.py`` for the API, ``store.py`` for the storage seam and the isolation rule,
``models.py`` for the naming rule.
"""

from .api import Agent, Agents
from .models import DEFAULT_MAX_VECTORS, AgentEvent, AgentInfo, AgentScope, Interaction
from .monitor import AgentSizeMonitor, EventStream

__all__ = [
    "DEFAULT_MAX_VECTORS",
    "Agent",
    "AgentEvent",
    "AgentInfo",
    "AgentScope",
    "AgentSizeMonitor",
    "Agents",
    "EventStream",
    "Interaction",
]
