"""``layered-memory topics ...``: the topic tier from the shell. Maps 1:1 onto ``mem.topics`` and only adapts
(library errors become one line on stderr and exit code 2, via the main group).

    layered-memory topics list telegram:42
    layered-memory topics show t-3f2a...            # the topic, its latest summary with its score, every version's score
    layered-memory topics evaluate t-3f2a... --json # score the latest summary now
"""

from __future__ import annotations

import json
from typing import Any

import click


def _open(ctx: click.Context) -> Any:
    """The engine of the root command's options (``ctx.obj["open_memory"]``, as ``cli/agents.py`` does)."""
    root = ctx.find_root()
    return root.obj["open_memory"](root)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def _score_line(q: dict[str, Any] | None) -> str:
    if not q:
        return "not scored (written before scoring was on)"
    llm = (q.get("llm_evaluation") or {}).get("score")
    parts = [f"overall {q['overall_score']:.2f}", f"coverage {q['coverage']:.2f}",
             "coherence " + ("-" if q.get("coherence") is None else f"{q['coherence']:.2f}"), f"relevance {q['relevance']:.2f}",
             "llm " + ("-" if llm is None else f"{llm:.2f}")]
    if q.get("redistributed"):
        parts.append(f"weights redistributed from {', '.join(q['redistributed'])}")
    if q.get("retried"):
        parts.append("retried: " + ", ".join(f"{a['generation_method']} {a['overall_score']:.2f}" for a in q.get("attempts", [])))
    return "; ".join(parts)


@click.group("topics")
def topics_group() -> None:
    """Topics and their summaries: list, show, evaluate.

    Example: layered-memory topics list telegram:42
    """


@topics_group.command("list")
@click.argument("chat_id")
@click.option("--active", is_flag=True, help="Only active topics.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def list_topics(ctx: click.Context, chat_id: str, active: bool, as_json: bool) -> None:
    """The chat's topics, oldest first (``mem.topics.list``).

    Example: layered-memory topics list telegram:42 --active
    """
    with _open(ctx) as mem:
        topics = mem.topics.list(chat_id, active_only=active)
    if as_json:
        _echo_json([t.model_dump(mode="json", exclude={"topic_vector"}) for t in topics])
        return
    for t in topics:
        click.echo(f"{t.topic_id}  {t.title}  ({t.message_count} messages, {'active' if t.is_active else 'closed'})")


@topics_group.command("show")
@click.argument("topic_id")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def show(ctx: click.Context, topic_id: str, as_json: bool) -> None:
    """A topic, its latest summary with its quality score, and the score of every version.

    Example: layered-memory topics show t-3f2a9c
    """
    with _open(ctx) as mem:
        topic = mem.topics.get(topic_id)
        versions = mem.topics.summaries(topic_id)
    if as_json:
        _echo_json({"topic": topic.model_dump(mode="json", exclude={"topic_vector"}),
                    "summaries": [v.model_dump(mode="json") for v in versions]})
        return
    click.echo(f"{topic.topic_id}  {topic.title}")
    click.echo(f"  chat {topic.chat_id}, {topic.message_count} messages, {'active' if topic.is_active else 'closed'}, "
               f"keywords: {', '.join(list(topic.keywords or {})[:8]) or '-'}")
    if not versions:
        click.echo("  no summary yet (layered-memory process, or mem.topics.summarize)")
        return
    latest = versions[-1]
    meta = latest.metadata or {}
    click.echo(f"  summary v{latest.version} ({meta.get('generation_method')}, {meta.get('trigger')}): {latest.content}")
    click.echo(f"  quality: {_score_line(meta.get('quality'))}")
    for v in versions:
        q = (v.metadata or {}).get("quality")
        score = "-" if not q else f"{q['overall_score']:.2f}"
        click.echo(f"    v{v.version}  {str(v.update_time)[:19]}  {(v.metadata or {}).get('generation_method')}  quality {score}")


@topics_group.command("evaluate")
@click.argument("topic_id")
@click.option("--version", type=int, default=None, help="Score this version (default: the latest).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def evaluate(ctx: click.Context, topic_id: str, version: int | None, as_json: bool) -> None:
    """Score a topic summary now (``mem.topics.evaluate_summary``): coverage, coherence, relevance, LLM judgement.

    Example: layered-memory topics evaluate t-3f2a9c --json
    """
    with _open(ctx) as mem:
        result = mem.topics.evaluate_summary(topic_id, version=version)
    if as_json:
        _echo_json(result)
    else:
        click.echo(_score_line(result))
