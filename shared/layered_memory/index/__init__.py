"""The index layer: the scope rule and the filter spec every index query starts from.

``scope.Scope`` says who a call acts for; ``filters.FilterSpec`` compiles one filter both to a
Qdrant ``Filter`` and to the in-process predicate of the core mode (no vector index).
"""

from .filters import Eq, FilterSpec, HasId, IsEmpty, Range
from .scope import Scope, check_user_id

__all__ = ["Eq", "FilterSpec", "HasId", "IsEmpty", "Range", "Scope", "check_user_id"]
