"""The background work and upkeep of one tenant: ``process()``, the index (``sync_index``, ``flush``,
``status``, ``reindex``, ``optimize``), ``doctor`` and ``close`` (the facade delegates here).

    upkeep = Maintenance(core, scope)          # what LayeredMemory builds on first use
    upkeep.process()     # {"indexed": 3, "summaries": 1, "threaded": 12, "topic_summaries": 2, ...}

``process()`` condenses, each step idempotent (safe to re-run after a crash): the interrupted deletes and
edits are finished and the pending messages indexed (``sync_index``) -> the session summaries the writes
queued or an edit made stale are refreshed -> the topic tier threads the log above its cursor and writes
due topic summaries, each handed to the long-term tier -> the long-term tier runs its extraction jobs.
It works for the whole tenant: on a handle bound to a user it does the same as on the engine.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .errors import InvalidInputError
from .index import Scope
from .session_summaries import SessionSummaries, stale_sessions
from .writes import drain_intents

if TYPE_CHECKING:
    from .kernel import Kernel


class Maintenance:
    """The upkeep of one handle's tenant (``scope``: its tenant and bound user, who may not read the tenant's reports)."""

    def __init__(self, core: Kernel, scope: Scope) -> None:
        self.core = core
        self.scope = scope
        self.tenant_id = scope.tenant

    def process(self) -> dict[str, int]:
        """Run pending background work: finish interrupted deletes, index pending messages, refresh stale
        summaries, thread messages (each step idempotent: safe to re-run after a crash)."""
        core, tenant = self.core, self.tenant_id
        done = {"indexed": self.sync_index(), "summaries": 0}
        summaries = SessionSummaries(core, Scope(tenant))  # every user's: the work is the tenant's
        core.summary_jobs.update(stale_sessions(core.records, tenant))  # summaries an edit or delete made stale
        for job in sorted(j for j in core.summary_jobs if j[0] == tenant):
            core.summary_jobs.discard(job)
            before = summaries.get_summary(job[1], job[2])
            after = summaries.refresh_summary(job[1], job[2])
            done["summaries"] += int(after is not None and after != before)
        for tier in (core.topics, core.knowledge):  # threading and topic summaries, then extraction from them
            for name, n in tier.process(tenant).items():
                done[name] = done.get(name, 0) + n
        return done

    def sync_index(self) -> int:
        """Finish interrupted deletes, then index messages stored but not yet indexed (after a crash or
        an embedder outage; in the background mode the writer does, this waits for it). Returns how
        many messages were indexed."""
        core, tenant = self.core, self.tenant_id
        with core.write_lock:
            drain_intents(core, tenant)
        if not core.deferred:
            with core.write_lock:
                return core.indexer.flush(tenant)
        core.flush_index(0)  # refuses under the write lock
        before = core.records.count_pending(tenant)
        core.background.notify(tenant)  # type: ignore[union-attr]
        core.background.settle()  # type: ignore[union-attr]  # a record the embedder keeps refusing does not hang process()
        return max(0, before - core.records.count_pending(tenant))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything written so far is indexed, dense vectors included (the background
        writer embeds them after ``add_message`` returns). False when ``timeout`` seconds passed first."""
        return self.core.flush_index(timeout)

    def status(self) -> dict[str, Any]:
        """This tenant's indexing: ``mode``, ``pending`` per kind, ``lag_seconds`` (the oldest write not
        yet indexed), lag P50/P95 of recent writes, ``failing`` and ``last_error``, ``hnsw`` per collection.
        Refused on a handle bound to a user (it reports the whole tenant)."""
        core, tenant = self.core, self.tenant_id
        if self.scope.bound_user:
            raise InvalidInputError(
                "status", self.scope.bound_user, "reports the whole tenant; a handle bound to a user cannot read it",
                "run it on the unbound engine (mem or mem.tenant(name))",
            )
        mode = "background" if core.deferred else "sync" if core.embedder is not None else "sync (no embedder: BM25 only)"
        if core.index is None:
            mode = "none (no vector index: BM25 over the record store)"
        if core.background is None:
            return {"mode": mode, "pending": {"messages": core.records.count_pending(tenant)}, "hnsw": {}}
        return {"mode": mode, **core.background.status(tenant)}

    def reindex(self) -> int:
        """Rebuild this tenant's vector index from the RecordStore: messages, items, topic summaries and
        agent interactions (orphan points are removed too). Returns how many records were indexed."""
        from .doctor import Tenant, reindex

        return reindex(Tenant(self.core, self.tenant_id))

    def doctor(self, repair: bool = False) -> dict[str, Any]:
        """Compare this tenant's records with the vector index and the topic tier; ``repair=True`` fixes what
        differs. Returns per kind (messages, topic_summaries, items, agents, documents) records, points, pending,
        missing and orphans, plus ``topics`` (unthreaded messages, wrong counters), ``outbox`` (interrupted
        deletes) and ``ok``. See ``layered_memory.doctor``."""
        from .doctor import Tenant, check

        if self.scope.bound_user:
            raise InvalidInputError(
                "doctor", self.scope.bound_user, "checks the whole tenant; a handle bound to a user cannot run it",
                "run it on the unbound engine (mem or mem.tenant(name))",
            )
        return check(Tenant(self.core, self.tenant_id), repair=repair)

    def optimize(self) -> dict[str, float]:
        """Build the ANN (HNSW) index of the embedded vector collections: maintenance, never run on
        the request path (it blocks writes; minutes at 100k points on 2 cores). Until it runs,
        Qdrant Edge searches exactly by brute force, which is fast enough below ~10k points per
        scope. A Qdrant server optimizes by itself: nothing to do there. Returns seconds per collection."""
        from .stores.base import MANUAL_OPTIMIZE

        core = self.core
        if core.index is None or MANUAL_OPTIMIZE not in core.index.capabilities:
            return {}
        out: dict[str, float] = {}
        for name in sorted({core.indexer.collection, *core.ensured_collections}):
            t0 = time.perf_counter()
            if core.background is not None:  # recorded in status(); the write path does not wait on it
                core.background.optimize(name)
            else:
                core.index.optimize(name)
            out[name] = round(time.perf_counter() - t0, 3)
        return out

    def close(self) -> None:
        core = self.core
        if core.closed:
            return
        core.closed = True
        if core.background is not None:  # drain for up to writer.close_timeout; the rest waits for the next open
            core.background.close(core.settings.writer.close_timeout)
        core.records.close()
        if core.index is not None:
            core.index.close()


__all__ = ["Maintenance"]
