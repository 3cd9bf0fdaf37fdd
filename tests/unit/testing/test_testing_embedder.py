"""layered_memory.testing.HashEmbedder: deterministic, process-stable, similar texts close; and the testing
package never makes pytest a runtime dependency."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from layered_memory.errors import InvalidInputError
from layered_memory.providers import Embedder, as_embedder
from layered_memory.testing import HashEmbedder

TEXTS = ["Where should we go hiking this weekend?", "Куда поедем в отпуск летом?", "周末我们去哪里爬山？", ""]


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout


def test_vectors_are_the_same_in_another_process() -> None:
    code = ("import json; from layered_memory.testing import HashEmbedder\n"
            f"print(json.dumps(HashEmbedder(dim=32).embed_documents({TEXTS!r})))")
    other = json.loads(_run(code))
    assert other == HashEmbedder(dim=32).embed_documents(TEXTS)  # exact: no salted hash()


def test_unit_vectors_of_fixed_dim_and_similar_texts_are_closer() -> None:
    emb = HashEmbedder(dim=64)
    assert isinstance(emb, Embedder) and as_embedder(emb) is emb and emb.name == "hash-ngram-3-64"
    v = np.asarray(emb.embed_documents([
        "Where should we go hiking this weekend?", "where should we go hiking next weekend", "My laptop keeps crashing",
        "周末我们去哪里爬山？", "周末去哪里爬山",
    ]))
    assert v.shape == (5, 64)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-9)
    sims = v @ v.T
    assert sims[0, 1] > 0.7 > 0.3 > abs(sims[0, 2])
    assert sims[3, 4] > 0.5 > abs(sims[3, 2])
    assert emb.embed_query("  Where SHOULD we go hiking this weekend? ") == emb.embed_documents([TEXTS[0]])[0]
    assert np.linalg.norm(emb.embed_query("")) == pytest.approx(1.0)  # empty text: still a unit vector
    assert emb.calls == 4
    assert asyncio.run(emb.aembed_query("x")) == emb.embed_query("x")


def test_bad_arguments_name_the_fix() -> None:
    with pytest.raises(InvalidInputError, match="dim"):
        HashEmbedder(dim=1)
    with pytest.raises(InvalidInputError, match="embed_query"):
        HashEmbedder().embed_documents("one string")


def test_pytest_is_not_a_runtime_dependency() -> None:
    out = _run(
        "import sys, layered_memory, layered_memory.engine\n"
        "from layered_memory.testing import HashEmbedder\n"
        "print('pytest' in sys.modules)\n"
        "from layered_memory.testing import RecordStoreConformance\n"
        "print('pytest' in sys.modules)\n"
    )
    assert out.split() == ["False", "True"]
