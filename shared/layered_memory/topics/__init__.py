"""Topic threading, short-term recall and mid-term summaries (seed 001, 2-3). Reach it as ``mem.topics``."""

from .api import Topics
from .cache import InProcessRecentCache, RecentCache, RedisRecentCache
from .deep_search import TopicHit, TopicSearchResult

__all__ = ["InProcessRecentCache", "RecentCache", "RedisRecentCache", "TopicHit", "TopicSearchResult", "Topics"]
