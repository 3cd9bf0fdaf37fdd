"""Settings, read only at the edge (``LayeredMemory.from_settings()``); env prefix ``LAYERED_MEMORY_``.

Nested values use ``__``: ``LAYERED_MEMORY_REDIS__URL=redis://localhost:6379/0``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_SHORT_TERM_WINDOW = 10
DEFAULT_SUMMARY_THRESHOLD = 20
DEFAULT_MAX_CONTENT_CHARS = 32_000


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SQLiteSettings(_Section):
    """The embedded record store. ``synchronous`` is SQLite's ``PRAGMA synchronous`` in WAL mode:
    FULL (default) fsyncs the WAL at every commit, so an acknowledged message survives a power
    loss or an OS crash; NORMAL survives a crash of the application only (the last commits may roll
    back after a power loss) and saves one fsync per write; EXTRA adds a directory sync that matters
    outside WAL mode only."""

    path: str | None = None  # None: <data_dir>/records.sqlite3 (LayeredMemory.embedded / from_settings honour it)
    synchronous: Literal["NORMAL", "FULL", "EXTRA"] = "FULL"

    @field_validator("synchronous", mode="before")
    @classmethod
    def _upper(cls, v: object) -> object:
        return v.upper() if isinstance(v, str) else v


class RedisSettings(_Section):
    url: str | None = None
    prefix: str = "lm"
    cluster: bool = False  # a Redis Cluster (also said by a redis+cluster:// or rediss+cluster:// url)
    # With replicas: a write returns once this many replicas have it (WAIT), so a failover loses no
    # acknowledged write; a write they do not acknowledge within wait_timeout seconds raises BackendTimeout.
    wait_replicas: int = 0
    wait_timeout: float = 1.0
    socket_timeout: float = 5.0
    connect_timeout: float = 2.0


class PostgresSettings(_Section):
    """The PostgreSQL record store (seed 001): ``url`` is a libpq URL
    (``postgresql://user:password@host:5432/dbname``); the tables live in ``schema_name``."""

    url: str | None = None
    schema_name: str = "layered_memory"
    pool_min_size: int = Field(1, ge=0)
    pool_max_size: int = Field(10, ge=1)
    connect_timeout: float = Field(5.0, gt=0)
    statement_timeout: float = Field(30.0, gt=0)


class QdrantSettings(_Section):
    url: str | None = None  # None: embedded Qdrant Edge under <data_dir>/vectors
    api_key: SecretStr | None = None
    timeout: float = 10.0
    collection_prefix: str = "lm_"


class RetrievalSettings(_Section):
    """Defaults chosen by leave-one-set-out on four set shapes (LoCoMo, synthetic en/ru/zh chats and
    assistant chats, long assistant chats; benchmarks/retrieval_loso.py, docs/retrieval.md): index each
    turn by its own text ("Speaker: text") and by its text after the turn before it in its chat, take 50
    candidates per side, fuse them by ``fusion`` ("rrf" uses rrf_k and dense_weight / sparse_weight) and
    rerank them with the second-stage signals (layered_memory.retrieval.rerank; a weight of 0 turns one off)."""

    k1: float = 1.2  # BM25 of the document vectors of documents, items, agents' records and summaries
    b: float = 0.75
    avgdl: float = 32.0  # fixed average document length in terms: vectors stay comparable across restarts
    # BM25 of the message vectors. A message's document is its context (the turn before) plus its own words
    # twice, so Lucene's b=0.75 at 32 terms buried a long, wordy turn, and a turn after one, under short turns
    # that share a common word (picked by leave-one-set-out, docs/retrieval.md "BM25's length normalisation";
    # prose documents keep Lucene's: Cranfield loses 1.8 points of nDCG@10 with these). Vectors already
    # written keep the values they were written with until `layered-memory reindex`.
    message_k1: float = Field(0.9, ge=0)
    message_b: float = Field(0.2, ge=0, le=1)
    message_avgdl: float = Field(64.0, gt=0)
    index_context: str = "neighbour"  # "neighbour" | "speaker" | "text"
    # Messages of a chat further apart than this belong to different sessions: the turn before is not a
    # message's context (indexing), and the session signal groups a chat's candidates by these sessions.
    session_gap_hours: float = Field(12.0, gt=0)
    # The dense vectors a message search queries: "both" (the message's text and its context, the mean of
    # the two cosines per message), "text", or "context" (the context where there is one: the previous release).
    dense_vectors: Literal["both", "text", "context"] = "both"
    # With "both": the dense side's list rescored as (1 - w) x the mean of the two cosines + w x the higher of that
    # and the message's best sentence's cosine (the ``sentences`` vector, schema 4): a fact said in passing in a long
    # message. Measured on thirteen sets (docs/retrieval.md); 0: off.
    sentence_weight: float = Field(0.3, ge=0, le=1)
    # The dense side embeds a question without its short opening clause ("Remind me, what ...?" -> "what ...?"):
    # a small embedding model matches the preamble to turns about reminding (layered_memory.retrieval.preamble;
    # BM25 and the signals read the whole query; measured in docs/retrieval.md "A question's preamble").
    drop_preamble: bool = True
    # search(group_by="session"): a session's score from its hits' (layered_memory.retrieval.groups).
    group_aggregation: Literal["max", "top2", "top3", "decay"] = "max"
    rrf_k: int = Field(2, ge=1)
    dense_weight: float = Field(0.5, ge=0)
    sparse_weight: float = Field(1.0, ge=0)
    prefetch_limit: int = Field(50, ge=1, le=1000)
    # The deep tail (opt-in): a search for more than ``deep_from`` hits ranks the hits below the first
    # ``deep_from`` again from each side's top ``deep_limit`` (0: off), so evidence further down the lists
    # reaches the top 50 the context packs; the first ``deep_from`` stay the ranking of the top
    # ``prefetch_limit``. Measured (docs/retrieval.md): 200 wins leave-one-set-out (LoCoMo R@50 +1.8 to +2.0
    # points, no set loses at R@5/10/50) but reading 200 hits per side with their payloads costs about
    # +5.5 to +8 ms (P50) per such search on a scope of a few hundred turns, over the latency budget: off by default.
    deep_limit: int = Field(0, ge=0, le=1000)
    deep_from: int = Field(10, ge=1, le=100)
    max_query_chars: int = 2_000
    # Second stage over the fused candidates (layered_memory.retrieval.rerank); a weight of 0 turns a signal off.
    fusion: Literal["rrf", "zscore", "dbsf", "adaptive", "confidence"] = "confidence"
    fusion_dense_weight: float = Field(1.5, ge=0)  # dense weight of the score fusions (sparse_weight is the other)
    # How the signals combine: "rules" (fused + weight x signal), "learned" (a logistic model shipped in
    # layered_memory.retrieval.learned, trained on synthetic conversations), "off" (fused score only).
    reranker: Literal["rules", "learned", "off"] = "rules"
    # With a rerank model (``LayeredMemory(..., rerank_model=...)``, opt-in): how many of a message search's best
    # hits it reads and reorders (the rest follow in the engine's order; a verbatim match stays first).
    rerank_depth: int = Field(30, ge=1, le=100)
    adaptive_top: int = Field(3, ge=1, le=50)
    adaptive_power: float = Field(1.0, ge=0, le=4)
    # fusion="confidence" (layered_memory.retrieval.confidence): each side's weight from how much it knows
    # about this query (strength of its top hits, their margin, the sides' agreement, query length, rare terms,
    # how much of the query BM25's best hits hold).
    # Chosen by leave-one-set-out on four set shapes (docs/retrieval.md); margin and length measured, not kept (0).
    confidence_top: int = Field(1, ge=1, le=50)  # a side's strength: the mean z of its best this many
    confidence_power: float = Field(0.5, ge=0, le=8)
    confidence_margin: float = Field(0.0, ge=0, le=8)
    confidence_disagreement: float = Field(1.0, ge=0, le=8)
    confidence_length: float = Field(0.0, ge=0, le=2)  # BM25's confidence x exp(-this x terms beyond confidence_short_terms)
    confidence_short_terms: int = Field(4, ge=0, le=50)
    confidence_rare: float = Field(0.3, ge=0, le=4)  # BM25's confidence x (1 + this x rare-looking query terms, up to 3)
    # BM25's confidence x min(1, coverage / confidence_coverage_full) ** confidence_coverage, where coverage is the
    # largest share of the query's terms (speakers' names left out) that one of BM25's best confidence_coverage_top
    # hits holds: a BM25 list led by hits that share only a filler word or a name with the query does not lead.
    confidence_coverage: float = Field(0.5, ge=0, le=8)
    confidence_coverage_top: int = Field(1, ge=1, le=50)
    confidence_coverage_full: float = Field(0.34, gt=0, le=1)
    # A message that is the query verbatim (up to case and whitespace) comes first on every route.
    exact_first: bool = True
    neighbour_weight: float = Field(0.3, ge=0)
    neighbour_span: int = Field(1, ge=1, le=10)
    session_weight: float = Field(0.0, ge=0)  # measured: +1 pt LoCoMo, -0.5 to -1.5 pt elsewhere (docs/retrieval.md)
    speaker_weight: float = Field(0.7, ge=0)
    phrase_weight: float = Field(0.0, ge=0)
    time_weight: float = Field(2.5, ge=0)  # leave-one-set-out on hit@1, R@5 unchanged (docs/retrieval.md)
    time_decay: float = Field(0.5, ge=0)
    # relative dates: against the clock, or the newest candidate (imported history); boost outside the window:
    # exp(-gap / (window width x time_decay))
    time_anchor: Literal["now", "latest"] = "now"


class MemorySettings(_Section):
    short_term_window: int = Field(DEFAULT_SHORT_TERM_WINDOW, ge=1, le=1000)
    summary_threshold_messages: int = Field(DEFAULT_SUMMARY_THRESHOLD, ge=2)
    max_content_chars: int = Field(DEFAULT_MAX_CONTENT_CHARS, ge=1)
    # Caps on the message lines of "Relevant memory" / "Relevant conversation memory"; the budget decides
    # how many go in (context.max_tokens), these only bound it. 0 turns a block's messages off.
    relevant_memory_k: int = Field(100, ge=0, le=100)
    conversation_memory_k: int = Field(100, ge=0, le=100)
    # Session participants: the user_ids a bot stores its own replies under (e.g. ["bot-42"], as in Feishu or
    # Slack, where the author of a message is its user_id). Their messages in a session belong to the session:
    # the window of every user who wrote in it shows them. Env: LAYERED_MEMORY_MEMORY__BOT_USER_IDS='["bot-42"]'.
    bot_user_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> MemorySettings:
        if self.summary_threshold_messages <= self.short_term_window:
            raise ValueError(
                f"summary_threshold_messages={self.summary_threshold_messages} must be greater than "
                f"short_term_window={self.short_term_window}: only messages older than the window are summarized; "
                "raise summary_threshold_messages"
            )
        return self


class ContextSettings(_Section):
    """``get_context_for_user`` (docs/context.md): ``max_tokens`` is the budget filled when a call names
    none; ``relevance_floor`` the absolute relevance (0..1: the larger of the embedder's calibrated cosine
    and the IDF-weighted share of the query's terms) under which a recalled line is noise and never shown;
    ``relevance_gate`` the relevance the best candidate must reach for any recalled line to be shown (under
    it the question is about nothing in memory); both measured on the dev sets (``benchmarks/context.py
    --floor-study``) and re-checked by the slow test ``tests/unit/context/test_relevance_thresholds.py``;
    ``read_your_writes`` how many of the asking user's messages still queued for the index
    writer are embedded on the request path (0: none; the context may then differ from the one built after
    ``flush()``); ``search_depth`` how many hits the message search returns for the recalled blocks (None:
    ``max_tokens // 40``, between 20 and 100): more hits fill a large budget with more evidence and cost
    time per call (docs/context.md measures both)."""

    max_tokens: int = Field(2000, ge=1)
    encoding: str = "o200k_base"
    relevance_floor: float = Field(0.18, ge=0, le=1)  # 0.2 until LoCoMo's evidence kept drifted to 0.986 (rule: 0.99)
    relevance_gate: float = Field(0.29, ge=0, le=1)  # 0.35 until a check on eight synthetic seeds: it closed 1.4 to 2.8% of their questions
    read_your_writes: int = Field(64, ge=0, le=1024)
    search_depth: int | None = Field(None, ge=1, le=100)


class TopicSettings(_Section):
    """Topic threading, mid-term summaries and the recent-message cache (seed 001, 2.3-3.2).

    Similarities are cosines of the configured embedder rescaled by two anchors measured once per
    embedder (unrelated sentence pairs -> 0, typical same-topic pairs -> 0.8), so the seed's 0.7 / 0.5
    bands mean the same for every model; without an embedder, the share of the message's BM25 terms
    the topic has already seen.
    """

    enabled: bool = True
    assign_threshold: float = Field(0.7, gt=0, le=1)  # above: join the best topic
    ambiguous_threshold: float = Field(0.5, ge=0, le=1)  # between: ask the chat model among the top candidates
    candidates: int = Field(3, ge=1, le=10)
    decision_messages: int = Field(5, ge=0, le=50)  # recent messages per candidate in the prompt
    similarity_floor: float | None = Field(None, ge=-1, lt=1)  # cosine of unrelated texts; None: measured
    similarity_topical: float | None = Field(None, gt=-1, le=1)  # cosine of same-topic texts; None: measured
    continuity_seconds: float = Field(300.0, ge=0)  # the chat's latest topic gets a bonus within this gap
    continuity_bonus: float = Field(0.2, ge=0, le=1)
    min_terms: int = Field(3, ge=0)  # messages with fewer content terms (e.g. "ok", "好的") continue the latest topic
    idle_timeout_seconds: float = Field(1800.0, gt=0)  # a topic idle this long closes (summary trigger)
    summary_every_messages: int = Field(20, ge=2)  # new messages in a topic that trigger a summary
    summary_interval_seconds: float | None = Field(None, gt=0)  # scheduled summaries of active topics
    segment_messages: int = Field(30, ge=2)
    summary_max_messages: int = Field(200, ge=2)
    reply_chain_depth: int = Field(5, ge=1, le=50)
    recall_max_messages: int = Field(20, ge=1, le=500)
    recent_cache: str = "auto"  # "auto" (redis with a Redis RecordStore or Postgres beside Redis, else memory), "memory", "redis", "none"
    recent_cache_size: int = Field(100, ge=1)
    recent_cache_ttl_seconds: int = Field(86_400, ge=1)
    profile_cache_ttl_seconds: float = Field(3_600.0, ge=0)
    batch_size: int = Field(64, ge=1)

    @model_validator(mode="after")
    def _check(self) -> TopicSettings:
        if self.ambiguous_threshold > self.assign_threshold:
            raise ValueError(
                f"ambiguous_threshold={self.ambiguous_threshold} must not exceed assign_threshold={self.assign_threshold}: "
                "the model decides between the two; lower ambiguous_threshold"
            )
        if self.similarity_floor is not None and self.similarity_topical is not None and self.similarity_topical <= self.similarity_floor:
            raise ValueError(
                f"similarity_topical={self.similarity_topical} must exceed similarity_floor={self.similarity_floor}; "
                "leave both unset to measure them from the embedder"
            )
        if self.recent_cache not in ("auto", "memory", "redis", "none"):
            raise ValueError(f"recent_cache={self.recent_cache!r} must be one of auto, memory, redis, none")
        return self


class SummaryQualitySettings(_Section):
    """Summary quality (seed 001, 3.2.3; ``layered_memory.evaluation``): the weights of the four
    components, the LLM judge (only with a chat model), and the score below which a new summary is
    written once more by the fallback (the extractive summary) and the better of the two kept
    (``retry_below=0`` turns the retry off; ``enabled=False`` turns scoring off)."""

    enabled: bool = True
    coverage_weight: float = Field(0.3, ge=0)
    coherence_weight: float = Field(0.2, ge=0)
    relevance_weight: float = Field(0.2, ge=0)
    llm_weight: float = Field(0.3, ge=0)
    llm_judge: bool = True  # ask the chat model for a 0-10 rating (one call per summary version)
    # coherence and title relevance with the engine's embedder (false: lexical proxies; ~7 ms per summary
    # instead of ~0.1 s with USE, ~1.5 s with e5 on 2 busy cores: benchmarks/summaries.py)
    embedder_proxies: bool = True
    judge_max_chars: int = Field(12_000, ge=500)  # conversation text in the judge's prompt (the newest turns)
    retry_below: float = Field(0.25, ge=0, le=1)  # measured on LoCoMo: benchmarks/summaries.py
    # weigh what sets the summarized span apart from the rest of its chat and lower the score of a summary
    # the span does not support (layered_memory.grounding, docs/summaries.md); false: the evaluator before
    # issue 24 (plain term frequencies, no support check)
    grounded: bool = True
    background_messages: int = Field(1000, ge=0, le=10_000)  # the chat's messages read as the background (0: none)

    @model_validator(mode="after")
    def _check(self) -> SummaryQualitySettings:
        if self.coverage_weight + self.coherence_weight + self.relevance_weight + self.llm_weight <= 0:
            raise ValueError("the summary quality weights are all 0; give at least one component a positive weight")
        return self


class IndexWriterSettings(_Section):
    """The background index writer (``index_mode="background"``): it embeds what is pending in batches of
    ``batch_size`` texts, retries a failing batch after ``retry_min_seconds`` doubling up to
    ``retry_max_seconds`` (it stays pending meanwhile), and builds the HNSW index of an embedded
    (Qdrant Edge) collection once ``optimize_threshold`` of its points are outside HNSW
    (0 turns the automatic build off; ``optimize()`` stays the explicit call). ``close_timeout``
    bounds how long ``close()`` waits for what is pending to drain; what is left is indexed by the next
    open. The embedder serves one call at a time, so a query waits for the writer's batch in
    flight: 16 texts keep that wait near a second with the default embedder on 2 busy cores."""

    batch_size: int = Field(16, ge=1, le=1024)
    optimize_threshold: int = Field(20_000, ge=0)
    retry_min_seconds: float = Field(0.1, gt=0)
    retry_max_seconds: float = Field(30.0, gt=0)
    close_timeout: float = Field(30.0, ge=0)


class DocumentSettings(_Section):
    """Documents and repositories (``mem.documents``): size limits and chunk sizes (characters)."""

    max_document_bytes: int = Field(20 * 2**20, ge=1)  # one document (index_document)
    max_file_bytes: int = Field(1 * 2**20, ge=1)  # one repository file: larger ones are skipped and counted
    chunk_chars: int = Field(1_500, ge=200)  # prose chunks are packed up to this size at block boundaries
    code_chunk_chars: int = Field(2_400, ge=200)  # a definition larger than this is split (nested defs, then lines)
    batch_size: int = Field(64, ge=1)  # chunks embedded per call
    include_in_context: bool = False  # get_context_for_user adds "Relevant documents:" (include_documents=None)
    context_k: int = Field(3, ge=1, le=20)  # document chunks offered to the context


class ServeSettings(_Section):
    """``layered-memory serve`` and ``layered-memory mcp``: where to listen and whom to serve (docs/serve.md)."""

    host: str = "127.0.0.1"  # loopback only by default: another address is an explicit choice
    port: int = Field(8765, ge=0, le=65535)
    keys_file: str | None = None  # JSON: bearer key (or its SHA-256) -> tenant and optionally user
    user: str | None = None  # mcp over stdio: the one user the server is bound to (None: the whole tenant)
    documents: bool = False  # mcp: offer the document tools (vector_rag, search_repos)
    max_body_bytes: int = Field(1_048_576, ge=1024)  # larger request bodies get 413


class LayeredMemorySettings(BaseSettings):
    """All settings. Environment: ``LAYERED_MEMORY_<FIELD>`` and ``LAYERED_MEMORY_<SECTION>__<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="LAYERED_MEMORY_", env_nested_delimiter="__", extra="forbid")

    data_dir: str = ".layered_memory"
    tenant: str = "default"
    # "default" (the local offline model), "e5" / "use" (a named local model), "none" (BM25 only),
    # or "openai:<model>@<base_url>" for any OpenAI-compatible /embeddings endpoint.
    embedder: str = "default"
    embedder_api_key: SecretStr | None = None
    # A model that reranks a message search's best hits (opt-in): "none", or "<model>@<url>" for the rerank API
    # that Cohere, Jina, Voyage, vLLM and Infinity share (layered_memory.providers.rerankers); objects are passed
    # to the constructors (``rerank_model=``).
    rerank_model: str = "none"
    rerank_model_api_key: SecretStr | None = None
    # "background": add_message returns once the records are durable and the BM25 point is written; a
    # background writer embeds the dense vectors in batches. "sync": embed inline (the add waits for the model).
    index_mode: Literal["background", "sync"] = "background"
    writer: IndexWriterSettings = IndexWriterSettings()
    sqlite: SQLiteSettings = SQLiteSettings()
    redis: RedisSettings = RedisSettings()
    postgres: PostgresSettings = PostgresSettings()
    qdrant: QdrantSettings = QdrantSettings()
    serve: ServeSettings = ServeSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    memory: MemorySettings = MemorySettings()
    context: ContextSettings = ContextSettings()
    topics: TopicSettings = TopicSettings()
    summary_quality: SummaryQualitySettings = SummaryQualitySettings()
    documents: DocumentSettings = DocumentSettings()
