"""One filter spec, two compilers: the Qdrant filter (run by Qdrant Edge and by qdrant-client local mode)
and the in-process predicate of the core mode must select exactly the same points."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator

import pytest

from layered_memory.errors import InvalidInputError
from layered_memory.index import Eq, FilterSpec, HasId, IsEmpty, Range, Scope, check_user_id
from layered_memory.stores.base import SparseVector, VectorIndex, VectorPoint
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
from layered_memory.stores.qdrant_server import QdrantVectorIndex

EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
COL = "specs"


def _payloads() -> list[dict]:
    out = []
    for i in range(60):
        p = {
            "tenant": ["t0", "t1", "t2"][i % 3],
            "kind": ["message", "item"][i % 2],
            "user_id": None if i % 7 == 0 else f"u{i % 4}",
            "role": ["user", "assistant", "tool"][i % 3],
            "seq": i,
            "success": i % 2,
            "timestamp": (EPOCH + dt.timedelta(days=i)).isoformat().replace("+00:00", "Z"),
            "links": [f"l{i % 5}", f"l{(i + 1) % 5}"] if i % 4 else [],
            "v": {"n": float(i % 6), "s": f"s{i % 3}"},
        }
        out.append({k: v for k, v in p.items() if v is not None})
    return out


PAYLOADS = _payloads()
IDS = [str(uuid.uuid5(uuid.NAMESPACE_OID, f"p{i}")) for i in range(len(PAYLOADS))]

SPECS = {
    "tenant": FilterSpec.of(Eq("tenant", "t1")),
    "tenant+user": FilterSpec.of(Eq("tenant", "t0"), Eq("user_id", "u2")),
    "any-of": FilterSpec.of(Eq("role", "user", "tool")),
    "int flag": FilterSpec.of(Eq("success", 1)),
    "list payload": FilterSpec.of(Eq("links", "l3")),
    "missing user": FilterSpec.of(IsEmpty("user_id")),
    "empty list": FilterSpec.of(IsEmpty("links")),
    "nested eq": FilterSpec.of(Eq("v.s", "s2")),
    "nested range": FilterSpec.of(Range("v.n", gte=2.0, lt=4.0)),
    "int range": FilterSpec.of(Range("seq", gt=10, lte=20)),
    "time range": FilterSpec.of(Range("timestamp", gte=EPOCH + dt.timedelta(days=5), lte=EPOCH + dt.timedelta(days=30))),
    "must_not": FilterSpec.of(Eq("tenant", "t2")).and_(must_not=[Eq("role", "assistant")]),
    "has id": FilterSpec.of(HasId(IDS[:9])),
    "exclude ids": FilterSpec.of(Eq("kind", "item")).excluding_ids(IDS[10:30]),
    "nothing": FilterSpec.of(Eq("tenant", "t0"), Eq("tenant", "t1")),
    "scope": Scope("t1", "u2").spec("message"),
    "owned none": Scope("t0").owned_spec("item", None),
    "owned u3": Scope("t1").owned_spec("item", "u3"),
}


@pytest.fixture(params=["edge", "local"], scope="module")
def index(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VectorIndex]:
    if request.param == "edge":
        idx: VectorIndex = QdrantEdgeVectorIndex(str(tmp_path_factory.mktemp("edge")))
    else:
        idx = QdrantVectorIndex.in_memory()
    idx.ensure_collection(COL, dense_dim=None)
    idx.upsert(COL, [VectorPoint(id=i, payload=p, sparse=SparseVector([1], [1.0])) for i, p in zip(IDS, PAYLOADS)])
    yield idx
    idx.close()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_index_and_predicate_select_the_same_points(index: VectorIndex, name: str) -> None:
    spec = SPECS[name]
    truth = {i for i, p in zip(IDS, PAYLOADS) if spec.matches(p, i)}
    hits, _ = index.scroll(COL, filter=spec.to_qdrant(), limit=1000)
    assert {h.id for h in hits} == truth
    if name not in ("nothing",):
        assert truth, f"{name}: a spec that selects nothing proves nothing"


def test_scope_pins_tenant_and_bound_user_first() -> None:
    spec = Scope("acme", "u1").spec("message")
    assert spec.must[:3] == (Eq("tenant", "acme"), Eq("kind", "message"), Eq("user_id", "u1"))
    widened = spec.and_(Eq("user_id", "u2"))  # a caller's filter can only narrow: u1 AND u2 is empty
    assert not any(widened.matches(p) for p in PAYLOADS)


def test_scope_refuses_another_user_and_empty_ids() -> None:
    bound = Scope("acme", "u1")
    assert bound.user(None) == "u1" and bound.owner(None) == "u1" and Scope("acme").owner(None) is None
    with pytest.raises(InvalidInputError, match="bound to user 'u1'"):
        bound.user("u2")
    with pytest.raises(InvalidInputError, match="bound to user 'u1'"):
        bound.narrow("u2")
    for empty in ("", "   "):
        with pytest.raises(InvalidInputError, match="empty user id"):
            check_user_id(empty)
        with pytest.raises(InvalidInputError, match="empty user id"):
            Scope("acme").narrow(empty)
    with pytest.raises(InvalidInputError, match="is required"):
        Scope("acme").user(None)
