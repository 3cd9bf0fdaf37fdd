"""The ``layered-memory`` command line (``main``): one module per group of commands.

- ``_base``: the group's error handling, opening the engine from the root options, printing;
- ``commands``: demo, ingest, search, context; ``maintenance``: optimize, reindex, doctor;
- ``agents``: ``layered-memory agent ...`` (the agent context store).
"""

from .main import main

__all__ = ["main"]
