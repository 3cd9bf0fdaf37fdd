"""A LlamaIndex FunctionAgent with layered-memory as its memory and its memory tools (runs offline).

    python examples/llamaindex_agent.py [--path ./memory] [--embedder default|none]

The agent's chat memory is ``LayeredChatMemory``; its tools come from ``LayeredMemoryToolSpec``,
bound to one user (``qdrant_search_memory``, ``search``, ``topic_search``, ``list_tasks``). The LLM
is a scripted ``MockFunctionCallingLLM`` that calls ``qdrant_search_memory`` and then
``list_tasks``; replace it with a real function-calling LLM to let the model decide.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM

from layered_memory import LayeredMemory
from llamaindex_layered_memory import LayeredChatMemory, LayeredMemoryToolSpec


def scripted_llm(messages: list[ChatMessage], **kwargs: object) -> ChatMessage:
    """Stands in for a real model: one tool call per question, then an answer from its result."""
    if messages[-1].role == MessageRole.TOOL:
        return ChatMessage(role="assistant", content="From memory:\n" + (messages[-1].content or ""))
    question = [m for m in messages if m.role == MessageRole.USER][-1].content or ""
    if "task" in question:
        call = ToolCallBlock(tool_call_id="call-2", tool_name="list_tasks", tool_kwargs={"status": "open"})
    else:
        call = ToolCallBlock(tool_call_id="call-1", tool_name="qdrant_search_memory", tool_kwargs={"query_text": question, "limit": 2})
    return ChatMessage(role="assistant", blocks=[call])


async def run(path: str, embedder: str) -> None:
    with LayeredMemory.embedded(path, embedder=embedder) as mem:
        mem.add_messages([
            {"message_id": "m1", "chat_id": "telegram:1", "user_id": "ann", "content": "My passport expires in June"},
            {"message_id": "m2", "chat_id": "telegram:9", "user_id": "bob", "content": "Bob's passport number is 123"},
        ])
        mem.create_task("ann", "Renew passport", due="2026-06-01T00:00:00Z")

        # tool calls and results stay in the run; the memory keeps the questions and answers (save_tool_messages=False)
        memory = LayeredChatMemory.from_defaults(mem, user_id="ann", session_id="agent:1")
        agent = FunctionAgent(
            # the agent can only see Ann's memory; session_id: the searches leave out this conversation's
            # window (the memory shows it already), so the question being answered is not its own first hit
            tools=LayeredMemoryToolSpec(mem, user_id="ann", session_id="agent:1").to_tool_list(),
            llm=MockFunctionCallingLLM(response_generator=scripted_llm),
            system_prompt="You help Ann with her plans.",
        )
        for question in ["When does my passport expire?", "Which tasks are open?"]:
            print(f"user>  {question}")
            print(f"agent> {await agent.run(user_msg=question, memory=memory)}\n")
        roles = [m.role for m in mem.get_session_messages("ann", "agent:1")]
        print("Stored turn roles:", " ".join(roles))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default=None, help="memory directory (default: a temporary one)")
    parser.add_argument("--embedder", default="default", help="'default' (local offline model) or 'none' (BM25 only)")
    args = parser.parse_args(argv)
    asyncio.run(run(args.path or tempfile.mkdtemp(prefix="layered-memory-"), args.embedder))


if __name__ == "__main__":
    main()
