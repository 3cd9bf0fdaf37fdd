"""Topic threading, short-term recall and mid-term summaries (seed 001, 2-3). Reach it as ``mem.topics``."""

from .api import Topics, register_topics
from .cache import InProcessRecentCache, RecentCache, RedisRecentCache
from .search import TopicHit, TopicSearchResult

__all__ = ["InProcessRecentCache", "RecentCache", "RedisRecentCache", "TopicHit", "TopicSearchResult", "Topics", "register_topics"]
