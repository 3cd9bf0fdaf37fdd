"""The index layer: the scope rule, the filter spec every index query starts from, point ids and payloads,
the collection API, the message write and search sides, and the background writer.

``scope.Scope`` says who a call acts for; ``FilterSpec`` (``layered_memory.filterspec``, below the retrieval
core that plans with it; re-exported here) compiles one filter both to a
Qdrant ``Filter`` and to the in-process predicate of the core mode (no vector index); ``points`` names
every point and builds message payloads; ``collection.IndexedCollection`` upserts, queries and deletes;
``indexer.Indexer`` writes message points and ``search.SearchService`` runs message search plans.
Two things wait on the index: what is *pending* (``pending``: records written, their points not built
yet; the background writer, ``background``/``writer``, drains them) and *delete intents* (``intents``:
deletes and edits not yet confirmed in the index, finished by the kind that wrote them).
"""

from ..filterspec import Eq, FilterSpec, HasId, IsEmpty, Range
from .scope import Scope, check_user_id

__all__ = ["Eq", "FilterSpec", "HasId", "IsEmpty", "Range", "Scope", "check_user_id"]
