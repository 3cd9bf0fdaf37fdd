"""Long-term tier (seed 001, 4): entities, relations, user profiles, graph queries. Reach it as ``mem.knowledge``."""

from .api import Knowledge

__all__ = ["Knowledge"]
