"""Issue 24: a Latin-1 text file was refused as "binary (NUL bytes or not UTF-8), not text text". Text that
is not UTF-8 is named as such with the fix (re-save as UTF-8, or pass its ``encoding``), and ``encoding=``
(CLI ``--encoding``) reads it, converted to UTF-8 on load."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from layered_memory import LayeredMemory
from layered_memory.cli import main
from layered_memory.errors import InvalidInputError

TEXT = "Café crème brûlée\n\nMix the cream, bake at 150 °C, caramelise the sugar.\n"


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[LayeredMemory]:
    m = LayeredMemory.embedded(tmp_path / "m", embedder="none")
    yield m
    m.close()


@pytest.fixture
def latin1(tmp_path: Path) -> Path:
    path = tmp_path / "recipe.txt"
    path.write_bytes(TEXT.encode("latin-1"))
    return path


def test_latin1_is_called_not_utf8_with_the_fix(mem: LayeredMemory, latin1: Path) -> None:
    with pytest.raises(InvalidInputError) as exc:
        mem.documents.index_document(latin1)
    err = exc.value
    assert "binary" not in err.rule and "text text" not in str(err)
    assert err.rule.startswith("is not UTF-8 (byte 0xe9 at offset 3; Latin-1 or Windows-1252")
    assert "re-save it as UTF-8" in err.fix and "encoding='latin-1'" in err.fix and "--encoding latin-1" in err.fix
    assert mem.documents.list_documents() == []


@pytest.mark.parametrize("encoding", ["latin-1", "latin1", "ISO-8859-1", "cp1252"])
def test_encoding_reads_it_as_text(mem: LayeredMemory, latin1: Path, encoding: str) -> None:
    done = mem.documents.index_document(latin1, encoding=encoding)
    assert done.status == "indexed"
    hit = mem.documents.vector_rag("crème brûlée", k=1).hits[0]
    assert "Café crème brûlée" in hit.text and "150 °C" in hit.text
    again = mem.documents.index_document(latin1, encoding=encoding)
    assert again.status == "unchanged"  # the same text: the same version


def test_bytes_and_batches_take_the_encoding_too(mem: LayeredMemory, latin1: Path) -> None:
    mem.documents.index_document(TEXT.encode("cp1252"), name="recipe-bytes.txt", encoding="cp1252")
    other = latin1.with_name("notes.md")
    other.write_bytes("# Notes\n\nÉclair au café.\n".encode("latin-1"))
    done = mem.documents.index_documents([latin1, other], encoding="latin-1")
    assert [d.status for d in done] == ["indexed", "indexed"]
    assert "Éclair au café." in mem.documents.vector_rag("éclair", k=1).hits[0].text


def test_utf16_is_pointed_at_its_encoding(mem: LayeredMemory, tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes(TEXT.encode("utf-16"))
    with pytest.raises(InvalidInputError, match=r"is binary \(NUL bytes\), not plain text.*encoding='utf-16'"):
        mem.documents.index_document(path)
    assert mem.documents.index_document(path, encoding="utf-16").status == "indexed"


def test_a_wrong_or_unknown_encoding_is_named(mem: LayeredMemory, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="encoding='klingon': is not a text encoding Python knows"):
        mem.documents.index_document(b"hello", name="x.txt", encoding="klingon")
    path = tmp_path / "utf8.txt"
    path.write_text("日本語のテキスト", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"is not ascii text \(byte 0xe6 at offset 0 cannot be decoded\)"):
        mem.documents.index_document(path, encoding="ascii")


def test_cli_encoding_option(tmp_path: Path, latin1: Path) -> None:
    store = ["--path", str(tmp_path / "store"), "--embedder", "none"]
    refused = CliRunner().invoke(main, [*store, "docs", "index", str(latin1)])
    assert refused.exit_code == 2 and "is not UTF-8" in refused.stderr and "--encoding latin-1" in refused.stderr
    done = CliRunner().invoke(main, [*store, "docs", "index", str(latin1), "--encoding", "latin-1"])
    assert done.exit_code == 0 and "1 indexed" in done.output, done.output + done.stderr
    bad = CliRunner().invoke(main, [*store, "docs", "index", str(latin1), "--encoding", "klingon"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --encoding 'klingon': is not a text encoding Python knows")
