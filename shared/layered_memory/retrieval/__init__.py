"""Pure retrieval core (no I/O): text analysis, BM25 (sparse encoder and in-process scorer),
reciprocal rank fusion and query-biased snippets."""

from .analyzer import Analyzer
from .bm25 import BM25Encoder, BM25Scorer, idf, term_id, top_k_scores
from .fusion import rrf
from .snippet import make_snippet

__all__ = ["Analyzer", "BM25Encoder", "BM25Scorer", "idf", "make_snippet", "rrf", "term_id", "top_k_scores"]
