"""Point ids on every Qdrant backend: canonical UUID strings; the engine's own ids pass as they are."""

from __future__ import annotations

import uuid

import pytest

from layered_memory.errors import InvalidInputError
from layered_memory.stores.qdrant_common import check_point_id

ID = uuid.uuid5(uuid.NAMESPACE_URL, "chat|m1")


def test_a_canonical_id_is_returned_unchanged():
    assert check_point_id(str(ID)) == str(ID)


@pytest.mark.parametrize("form", [ID, str(ID).upper(), "{" + str(ID) + "}", ID.urn, ID.hex])
def test_other_spellings_of_a_uuid_become_canonical(form):
    assert check_point_id(form) == str(ID)


@pytest.mark.parametrize("bad", ["m1", "", str(ID) + "0", str(ID)[:-1] + "g", 7, None])
def test_anything_else_is_refused_with_the_fix(bad):
    with pytest.raises(InvalidInputError, match="point ids must be UUID strings.*uuid5"):
        check_point_id(bad, "has_id")
