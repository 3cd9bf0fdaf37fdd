"""Which stores an engine opens: the embedded pair under a directory, the server backends named by
URLs, or whatever ``LAYERED_MEMORY_*`` says; and the checks every tenant gets when an engine opens.
The facade's constructors (``LayeredMemory.embedded``, ``from_urls``, ``from_settings``) call these.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from .config import LayeredMemorySettings
from .errors import ConfigurationError

if TYPE_CHECKING:
    from .kernel import Kernel
    from .stores.base import RecordStore, VectorIndex

logger = logging.getLogger(__name__)


def embedded_stores(path: str | os.PathLike[str], settings: LayeredMemorySettings) -> tuple[RecordStore, VectorIndex]:
    """SQLite (``settings.sqlite.path``, else ``<path>/records.sqlite3``) and Qdrant Edge under ``<path>/vectors``."""
    from .stores.qdrant_edge import QdrantEdgeVectorIndex
    from .stores.sqlite import SQLiteRecordStore

    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    return SQLiteRecordStore.from_settings(settings.sqlite, path), QdrantEdgeVectorIndex(os.path.join(path, "vectors"))


def server_stores(
    settings: LayeredMemorySettings, *, redis_url: str | None, postgres_url: str | None, qdrant_url: str | None,
    qdrant_api_key: str | None,
) -> tuple[RecordStore, VectorIndex | None]:
    """Records in PostgreSQL (Redis beside it is the recent-message cache) or Redis; vectors on a Qdrant
    server, or none (BM25 over the records). A bad Qdrant url is refused before the records open."""
    if qdrant_url is not None:
        from .stores.qdrant_common import check_url

        check_url(qdrant_url)
    rs = settings.redis
    records: RecordStore
    if postgres_url:
        from .stores.postgres import PostgresRecordStore

        records = PostgresRecordStore.from_settings(
            settings.postgres.model_copy(update={"url": postgres_url}), cache_url=redis_url, cache_prefix=rs.prefix
        )
    elif redis_url:
        from .stores.redis import RedisRecordStore

        records = RedisRecordStore.from_settings(rs.model_copy(update={"url": redis_url}))  # cluster, wait_replicas too
    else:
        raise ConfigurationError("from_urls needs postgres_url or redis_url for the records; or use LayeredMemory.embedded(path)")
    return records, qdrant_index(settings, qdrant_url, qdrant_api_key) if qdrant_url else None


def qdrant_index(settings: LayeredMemorySettings, url: str, api_key: str | None) -> VectorIndex:
    from .stores.qdrant_server import QdrantVectorIndex

    return QdrantVectorIndex.from_url(url, api_key=api_key, timeout=settings.qdrant.timeout)


def settings_stores(settings: LayeredMemorySettings) -> tuple[RecordStore, VectorIndex | None]:
    """The stores ``LAYERED_MEMORY_*`` names: PostgreSQL or Redis records (their urls), else SQLite under
    ``data_dir``; vectors on the Qdrant server at ``qdrant.url``, else Qdrant Edge (SQLite only)."""
    key = settings.qdrant.api_key.get_secret_value() if settings.qdrant.api_key else None
    if settings.postgres.url or settings.redis.url:
        return server_stores(settings, redis_url=settings.redis.url, postgres_url=settings.postgres.url,
                             qdrant_url=settings.qdrant.url, qdrant_api_key=key)
    if settings.qdrant.url:  # records embedded under data_dir, vectors on the Qdrant server
        from .stores.sqlite import SQLiteRecordStore

        index = qdrant_index(settings, settings.qdrant.url, key)  # a bad url: refused before the records open
        return SQLiteRecordStore.from_settings(settings.sqlite, settings.data_dir), index
    return embedded_stores(settings.data_dir, settings)


def check_tenants(core: Kernel, *, recreate_index: bool, repair_index: bool) -> None:
    """At open, every tenant: re-indexed from the records (``recreate_index``), or checked (``doctor.open_check``:
    drain deletes, index pending, repair drift; ``repair_index=False`` only warns)."""
    from .doctor import Tenant, open_check, reindex, warn_bm25

    for tenant in sorted({*core.records.tenants(), core.settings.tenant}):
        learned = core.chats.backfill(tenant)  # once per tenant: memberships of messages stored before chats were tracked
        if learned:
            logger.info("learned the chat members of %d stored messages of tenant %s", learned, tenant)
        if recreate_index:
            logger.info("indexed %d records of tenant %s", reindex(Tenant(core, tenant)), tenant)
        else:
            open_check(Tenant(core, tenant), repair=repair_index)
    if core.index is not None:
        warn_bm25(core)


__all__ = ["check_tenants", "embedded_stores", "server_stores", "settings_stores"]
