"""The Redis record store on a three-master Redis Cluster started by the suite: the conformance suite,
the engine end to end (write, search, context, topics, items, agents, deletes) and the cluster's own
rules (one slot per tenant, database 0 only, a node that is not a cluster)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.errors import BackendUnavailable, ConfigurationError
from layered_memory.stores.qdrant_server import QdrantVectorIndex
from layered_memory.stores.redis import RedisRecordStore
from layered_memory.testing import HashEmbedder, RecordStoreConformance

pytestmark = pytest.mark.redis
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


class TestRedisCluster(RecordStoreConformance):
    @pytest.fixture
    def opener(self, redis_cluster_url: str, redis_cluster_prefix: str) -> Any:
        return lambda: RedisRecordStore.from_url(redis_cluster_url, prefix=redis_cluster_prefix)


def _msg(i: int, text: str, user: str = "u1", session: str = "s1") -> dict[str, Any]:
    return {"message_id": f"m{i}", "chat_id": session, "user_id": user, "role": "user" if i % 2 else "assistant",
            "content": text, "create_time": T0 + timedelta(minutes=i)}


@pytest.fixture
def cluster_mem(redis_cluster_url: str, redis_cluster_prefix: str) -> Any:
    settings = LayeredMemorySettings()
    settings.memory.short_term_window = 2
    settings.memory.summary_threshold_messages = 4
    records = RedisRecordStore.from_url(redis_cluster_url, prefix=redis_cluster_prefix)
    mem = LayeredMemory.from_stores(records, QdrantVectorIndex.in_memory(), embedder=HashEmbedder(), settings=settings)
    yield mem
    mem.close()


def test_the_store_knows_it_is_a_cluster_and_names_it(redis_cluster_url: str, redis_cluster_prefix: str) -> None:
    store = RedisRecordStore.from_url(redis_cluster_url, prefix=redis_cluster_prefix)
    assert store.cluster and store.address.startswith("cluster 127.0.0.1:")
    store.close()
    plain = RedisRecordStore.from_url(redis_cluster_url.replace("redis+cluster://", "redis://"), prefix="x", cluster=True)
    assert plain.cluster
    plain.close()


def test_engine_end_to_end_on_the_cluster(cluster_mem: Any) -> None:
    """Tenants hash to different slots (and masters); every multi-key script and MULTI stays in one slot."""
    texts = ["moving the backend to Kubernetes", "payments pod in CrashLoopBackOff", "check kubectl logs",
             "Я еду в отпуск в Казань", "我下个月要去上海出差", "book the train tickets"]
    tenants = [cluster_mem.tenant(f"acme{i}") for i in range(6)]
    for n, mem in enumerate(tenants):
        mem.add_messages([_msg(i, f"{t} tenant{n}") for i, t in enumerate(texts, 1)])
        assert mem.add_message(_msg(1, f"{texts[0]} tenant{n}")).seq == 1  # idempotent
    for n, mem in enumerate(tenants):
        hits = mem.search(f"payments pod tenant{n}", route="bm25", k=3).hits
        assert hits[0].id == "m2" and all(f"tenant{n}" in h.text for h in hits)
        ctx = mem.get_context_for_user("u1", "s1")
        assert [m.message_id for m in ctx if m.kind == "window"] == ["m5", "m6"]
        assert mem.get_summary("u1", "s1")  # over the threshold: a summary (in the context unless the lines say it all)
        kinds = [m.kind for m in ctx]
        assert kinds == sorted(kinds, key=["summary", "user_data", "window", "memory", "conversation_memory"].index)  # seed 002 order
    first = tenants[0]
    first.process()
    assert first.topics.list("s1")
    first.items.put(("notes", "u1"), "k1", {"text": "the runbook lives in the wiki"})
    assert first.items.get(("notes", "u1"), "k1").value["text"].startswith("the runbook")
    agent = first.agents.create("u1", "coder")
    agent.add_interaction("ran pytest: 3 failures", task_id="t1", interaction_type="tool_call")
    assert agent.search("pytest failures", k=1).hits
    assert first.clear_session("u1", "s1") == 6
    assert first.get_session_messages("u1", "s1") == [] and tenants[1].get_session_messages("u1", "s1")
    assert cluster_mem.records.tenants() == [f"acme{i}" for i in range(6)]


def test_a_cluster_has_database_0_only(redis_cluster_url: str) -> None:
    with pytest.raises(ConfigurationError, match="database 3.*database 0 only"):
        RedisRecordStore.from_url(redis_cluster_url.replace("/0", "/3"))


def test_a_single_server_is_not_a_cluster(redis_url: str) -> None:
    """cluster=True against a server without cluster-enabled: one clear error with the fix."""
    with pytest.raises(BackendUnavailable, match="cluster-enabled yes.*drop \\+cluster"):
        RedisRecordStore.from_url(redis_url.replace("redis://", "redis+cluster://"))


def test_a_master_killed_mid_ingest_fails_over_and_loses_no_acknowledged_write(redis_binary: str, tmp_path: Any) -> None:
    """Three masters with a replica each, ``wait_replicas=1``: the tenant's master is killed after 40 of 120
    messages. Adds fail with a clear BackendError while the replica takes over; the new master has no
    replica until the dead node is restarted (it rejoins as the replica), so writes time out, clearly,
    until then; then they resume, and every acknowledged message is stored once, in order. (Without
    WAIT, Redis replicates asynchronously: a write acknowledged just before the kill could be lost.)"""
    import shutil
    import time

    from layered_memory.errors import BackendError
    from redis_server import RedisCluster

    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli is not on PATH")
    cluster = RedisCluster(redis_binary, cli, str(tmp_path), replicas=1)
    try:
        records = RedisRecordStore.from_url(cluster.url, prefix="fo", wait_replicas=1, socket_timeout=2, connect_timeout=1)
        mem = LayeredMemory.from_stores(records, None, embedder=None)
        master = records.client.get_node_from_key("{fo:default}:m")
        acked, errors = [], []
        for i in range(120):
            if i == 40:
                cluster.node(master.port).proc.kill()
            deadline = time.monotonic() + 60  # a bound on the failover, not a speed check
            while True:
                try:
                    mem.add_message(_msg(i, f"turn {i} of the ingest"))
                    acked.append(f"m{i}")
                    break
                except BackendError as exc:
                    errors.append(exc)
                    if time.monotonic() > deadline:
                        raise
                    if type(exc).__name__ == "BackendTimeout" and cluster.node(master.port).proc.poll() is not None:
                        cluster.restart(master.port)  # failed over: the old master comes back as a replica
                    time.sleep(0.2)
        assert [m.message_id for m in mem.get_session_messages("u1", "s1")] == acked == [f"m{i}" for i in range(120)]
        assert errors, "the kill was never noticed: the test did not test a failover"
        assert all("Redis" in str(e) and type(e).__name__ in ("BackendUnavailable", "BackendTimeout") for e in errors)
        new_master = records.client.get_node_from_key("{fo:default}:m")
        assert new_master.port != master.port
        mem.close()
    finally:
        cluster.stop()


def test_wait_replicas_without_replicas_is_a_clear_timeout(redis_url: str, redis_prefix: str) -> None:
    from layered_memory.errors import BackendTimeout

    store = RedisRecordStore.from_url(redis_url, prefix=redis_prefix, wait_replicas=1, wait_timeout=0.05)
    store.setup()
    with pytest.raises(BackendTimeout, match="0 of 1 replicas acknowledged.*retrying is safe"):
        store.put_docs("t", "notes", {"k": {"v": 1}})
    assert store.get_docs("t", "notes", ["k"]) == [{"v": 1}]  # on the master: a retry finds it
    store.close()


def test_from_settings_reaches_the_cluster_with_its_redis_settings(redis_cluster_url: str, redis_cluster_prefix: str) -> None:
    settings = LayeredMemorySettings()
    settings.redis.url, settings.redis.prefix, settings.redis.wait_timeout = redis_cluster_url, redis_cluster_prefix, 0.5
    with LayeredMemory.from_settings(settings, embedder="none") as mem:
        assert mem.records.cluster and mem.records.wait_timeout == 0.5
        mem.add_message(_msg(1, "hello from the settings"))
        assert [m.message_id for m in mem.get_session_messages("u1", "s1")] == ["m1"]


def test_a_cluster_node_given_as_redis_url_is_named_with_the_fix(redis_cluster_url: str) -> None:
    """Issue 24: ``redis://`` on a cluster node failed with "refused setup: 11555 ..." (a MOVED reply's text)."""
    node = redis_cluster_url.removeprefix("redis+cluster://").removesuffix("/0")
    for prefix in ("a", "b", "c", "lm"):  # setup's keys land on this node's slots or not: the same answer
        with pytest.raises(ConfigurationError, match=rf"Redis at {node} is a Redis Cluster node \(cluster_enabled:1\).*"
                                                      rf"use redis\+cluster://{node}"):
            RedisRecordStore.from_url(f"redis://{node}/0", prefix=prefix).setup()
    with pytest.raises(ConfigurationError, match="is a Redis Cluster node"):
        LayeredMemory.from_urls(redis_url=f"redis://{node}/0", embedder=HashEmbedder())


def test_a_cluster_node_that_hides_info_is_named_by_its_moved_reply(redis_cluster_url: str) -> None:
    """Managed Redis may refuse INFO: the first MOVED reply names the cluster node instead."""
    import redis

    node = redis_cluster_url.removeprefix("redis+cluster://").removesuffix("/0")
    admin = redis.Redis.from_url(f"redis://{node}/0")
    admin.execute_command("ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info")
    try:
        moved = 0
        for prefix in [f"p{i}" for i in range(12)]:
            store = RedisRecordStore.from_url(f"redis://noinfo:pw@{node}/0", prefix=prefix)
            try:
                store.setup()  # this node holds the prefix's schema key: a single server works on it
            except ConfigurationError as exc:
                assert f"Redis at {node} is a Redis Cluster node (it answered setup with MOVED" in str(exc)
                assert f"use redis+cluster://{node}" in str(exc)
                moved += 1
            finally:
                store.close()
        assert moved > 0  # three masters: most prefixes' keys live on another node
    finally:
        admin.execute_command("ACL", "DELUSER", "noinfo")
        admin.close()
        cluster = redis.RedisCluster.from_url(f"redis://{node}/0")
        for prefix in [f"p{i}" for i in range(12)]:
            cluster.delete(f"{prefix}:schema")
        cluster.close()
