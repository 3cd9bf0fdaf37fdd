"""The PostgreSQL record store's schema: versioned migrations, applied by ``migrate`` at ``setup()``.

Every table lives in one PostgreSQL schema (``layered_memory`` unless configured), so a database can
hold several stores; every row carries its tenant. Tables:

``lm_messages``  one row per message, the identity ``(tenant, chat_id, message_id)`` (Telegram numbers
                 each chat's messages from 1). ``body`` is the message JSON as written (``json`` keeps
                 the text exactly; ``seq`` lives in its column). The seed's structured fields
                 (user, session, role, topic, create time) are columns with the indexes below.
``lm_tenants``   every tenant that stored something, and its ``seq`` counter (never reused); a
                 writer locks its tenant's row, so the tenant's seq order is its commit order.
``lm_docs``      JSON documents ``(tenant, collection, key)``: summaries, topics, profiles, tasks...
                 Keys use the "C" collation, so they sort by code point like Python strings.
``lm_schema_version`` one row per applied migration.

Indexes: the window and scope queries ``(tenant, user_id, session_key, seq)``, ``(tenant, user_id,
seq)``, ``(tenant, chat_id, seq)``; scan by seq ``(tenant, seq)`` (unique); topic membership
``(tenant, topic_id, seq)``; what is pending for the index, a partial index on ``(tenant, seq) WHERE NOT indexed``.

Never edit a released migration: append a new one. ``migrate`` holds a transaction-scoped advisory
lock, so processes starting together apply each migration once.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidInputError, SchemaMismatch

SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_LOCK_KEY = 0x6C6D5F6D6967  # "lm_mig": pg_advisory_xact_lock key for migrations

# Each entry moves the schema one version up; "{s}" is the (validated, quoted) schema name.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE {s}.lm_tenants (
        tenant text COLLATE "C" PRIMARY KEY,
        last_seq bigint NOT NULL DEFAULT 0
    );
    CREATE TABLE {s}.lm_messages (
        tenant text COLLATE "C" NOT NULL,
        chat_id text COLLATE "C" NOT NULL,
        message_id text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        user_id text COLLATE "C" NOT NULL,
        session_key text COLLATE "C" NOT NULL,
        role text NOT NULL,
        topic_id text COLLATE "C",
        create_time timestamptz NOT NULL,
        body json NOT NULL,
        indexed boolean NOT NULL DEFAULT false,
        PRIMARY KEY (tenant, chat_id, message_id)
    );
    CREATE UNIQUE INDEX lm_messages_seq ON {s}.lm_messages (tenant, seq);
    CREATE INDEX lm_messages_session ON {s}.lm_messages (tenant, user_id, session_key, seq);
    CREATE INDEX lm_messages_user ON {s}.lm_messages (tenant, user_id, seq);
    CREATE INDEX lm_messages_chat ON {s}.lm_messages (tenant, chat_id, seq);
    CREATE INDEX lm_messages_topic ON {s}.lm_messages (tenant, topic_id, seq) WHERE topic_id IS NOT NULL;
    CREATE INDEX lm_messages_pending ON {s}.lm_messages (tenant, seq) WHERE NOT indexed;
    CREATE TABLE {s}.lm_docs (
        tenant text COLLATE "C" NOT NULL,
        collection text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        body json NOT NULL,
        PRIMARY KEY (tenant, collection, key)
    );
    """,
]


def check_schema_name(name: object) -> str:
    if not isinstance(name, str) or not SCHEMA_NAME.fullmatch(name):
        raise InvalidInputError(
            "postgres schema", name, "must be 1-63 characters of lowercase letters, digits and _ (not starting with a digit)",
            "use e.g. schema='layered_memory'",
        )
    return name


def current_version(cur: Any, schema: str) -> int:
    cur.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f'"{schema}".lm_schema_version',)
    )
    if not cur.fetchone()[0]:
        return 0
    cur.execute(f'SELECT COALESCE(MAX(version), 0) FROM "{schema}".lm_schema_version')
    return int(cur.fetchone()[0])


def migrate(conn: Any, schema: str, address: str) -> list[int]:
    """Apply the migrations not yet applied, in one transaction. Returns the versions applied.

    Raises:
        SchemaMismatch: the schema was written by a newer layered-memory.
    """
    s = f'"{check_schema_name(schema)}"'
    applied: list[int] = []
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        cur.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.lm_schema_version"
            " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = current_version(cur, schema)
        if current > len(MIGRATIONS):
            raise SchemaMismatch(
                f"PostgreSQL schema {schema!r} at {address} has layered-memory schema version {current}, this "
                f"layered-memory knows up to {len(MIGRATIONS)}; upgrade layered-memory or use another schema",
                backend="postgres", op="setup",
            )
        for version in range(current + 1, len(MIGRATIONS) + 1):
            for statement in MIGRATIONS[version - 1].format(s=s).split(";"):
                if statement.strip():
                    cur.execute(statement)
            cur.execute(f"INSERT INTO {s}.lm_schema_version (version) VALUES (%s)", (version,))
            applied.append(version)
    return applied
