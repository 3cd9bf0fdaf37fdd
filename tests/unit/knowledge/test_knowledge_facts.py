"""``mem.knowledge.list_facts`` / ``delete_fact``: the long-term tier as the viewer shows and corrects it.

A deleted entity takes its relations and its search point with it; a handle bound to a user forgets a
fact other users share only for itself; nothing outside the handle's scope can be deleted."""

from __future__ import annotations

import pytest

from layered_memory.errors import InvalidInputError, NotFoundError
from serve_support import ANNA, BORIS, OTHER, TENANT, group_chat_store, open_store, seed


@pytest.fixture
def mem(tmp_path):
    m = open_store(str(tmp_path))
    seed(m)
    yield m
    m.close()


def names(facts):
    return sorted(e["entity_name"] for e in facts["entities"])


def test_facts_are_listed_per_scope_with_provenance(mem):
    acme = mem.tenant(TENANT)
    anna = acme.for_user(ANNA).knowledge.list_facts()
    assert names(anna) == ["Alfama", "Kubernetes", "Lisbon", "TAP"]
    assert names(acme.for_user(BORIS).knowledge.list_facts()) == ["Berlin"]
    assert names(acme.knowledge.list_facts()) == ["Alfama", "Berlin", "Kubernetes", "Lisbon", "TAP"]
    assert names(mem.tenant(OTHER).knowledge.list_facts()) == ["Lisbon", "Zurich"]
    lisbon = next(e for e in anna["entities"] if e["entity_name"] == "Lisbon")
    assert lisbon["chat_ids"] == ["telegram:1"] and lisbon["user_ids"] == [ANNA] and "telegram-anna-0" in lisbon["sources"]
    assert "vector" not in lisbon
    assert {(r["source"], r["relation_type"], r["target"]) for r in anna["relations"]} == {("Alfama", "located_in", "Lisbon"), ("TAP", "flies_to", "Lisbon")}
    assert len(acme.knowledge.list_facts(limit=2)["entities"]) == 2
    with pytest.raises(InvalidInputError, match="limit"):
        acme.knowledge.list_facts(limit=0)


def test_deleting_an_entity_takes_its_relations_and_search_point(mem):
    kn = mem.tenant(TENANT).for_user(ANNA).knowledge
    lisbon = next(e for e in kn.list_facts()["entities"] if e["entity_name"] == "Lisbon")
    assert kn.delete_fact(lisbon["entity_id"]) == {"fact_id": lisbon["entity_id"], "kind": "entity", "deleted": True, "relations_deleted": 2}
    assert names(kn.list_facts()) == ["Alfama", "Kubernetes", "TAP"] and kn.list_facts()["relations"] == []
    assert "Lisbon" not in [e["entity_name"] for e in kn.search_entities("Lisbon city")]
    assert kn.query_graph("Alfama", max_depth=2)["edges"] == []
    assert names(mem.tenant(OTHER).knowledge.list_facts()) == ["Lisbon", "Zurich"]  # the same name in another tenant stays
    with pytest.raises(NotFoundError):
        kn.delete_fact(lisbon["entity_id"])


def test_deleting_a_relation_keeps_its_entities(mem):
    kn = mem.tenant(TENANT).knowledge
    rel = next(r for r in kn.list_facts()["relations"] if r["relation_type"] == "flies_to")
    assert kn.delete_fact(rel["relation_id"])["kind"] == "relation"
    assert [r["relation_type"] for r in kn.list_facts()["relations"]] == ["located_in"]
    assert names(kn.list_facts()) == ["Alfama", "Berlin", "Kubernetes", "Lisbon", "TAP"]
    assert kn.relations("TAP") == []


def test_a_handle_deletes_only_what_it_can_see(mem):
    acme = mem.tenant(TENANT)
    berlin = next(e for e in acme.knowledge.list_facts()["entities"] if e["entity_name"] == "Berlin")
    for h in (acme.for_user(ANNA), mem.tenant(OTHER)):
        with pytest.raises(NotFoundError):
            h.knowledge.delete_fact(berlin["entity_id"])
    assert "Berlin" in names(acme.knowledge.list_facts())
    for bad in ("Berlin", "x-1", "", None):
        with pytest.raises(InvalidInputError):
            acme.knowledge.delete_fact(bad)


def test_a_shared_fact_is_forgotten_only_for_the_bound_user(tmp_path):
    m = group_chat_store(str(tmp_path))
    acme = m.tenant(TENANT)
    eid = next(e["entity_id"] for e in acme.knowledge.list_facts()["entities"] if e["entity_name"] == "Lisbon")
    assert acme.for_user(ANNA).knowledge.delete_fact(eid)["deleted"] is False
    assert names(acme.for_user(ANNA).knowledge.list_facts()) == [] and acme.for_user(ANNA).knowledge.search_entities("Lisbon") == []
    assert names(acme.for_user(BORIS).knowledge.list_facts()) == ["Lisbon"]
    assert acme.knowledge.list_facts()["entities"][0]["user_ids"] == [BORIS]
    assert acme.for_user(BORIS).knowledge.delete_fact(eid)["deleted"] is True
    assert acme.knowledge.list_facts() == {"entities": [], "relations": []}
    m.close()
