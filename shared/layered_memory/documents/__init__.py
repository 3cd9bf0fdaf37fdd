"""Documents and repositories (seed 002): ``mem.documents`` indexes files, texts and git working
trees into the vector index and searches them with the messages' search contract.

See ``api`` (the facade), ``parse`` (formats), ``prose`` (prose chunking), ``syntax`` (syntax
chunking), ``repo`` (git trees) and ``store`` (records, points and the write protocol).
"""

from .api import Documents, IndexedDocument
from .repo import RepoIndexReport

__all__ = ["Documents", "IndexedDocument", "RepoIndexReport"]
