"""The engine's public names are exactly ``__all__`` (httpx's exported-members test)."""

import layered_memory


def test_all_is_sorted_and_complete():
    public = {n for n in vars(layered_memory) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(layered_memory, n)).__name__ == "module"}
    assert layered_memory.__all__ == sorted(layered_memory.__all__, key=str.casefold)
    assert set(layered_memory.__all__) == public - modules


def test_every_public_op_has_an_async_twin():
    from layered_memory import LayeredMemory

    for name in LayeredMemory._ASYNC:
        assert callable(getattr(LayeredMemory, "a" + name)), name
