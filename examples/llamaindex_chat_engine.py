"""A LlamaIndex chat engine whose memory is layered-memory (runs offline).

    python examples/llamaindex_chat_engine.py [--path ./memory] [--embedder default|none]

``LayeredChatMemory`` replaces ``ChatMemoryBuffer``: every turn is stored in the engine (durable,
searchable), and each LLM call gets the assembled context: summary, user data, the recent window and
relevant memory from the user's other conversations. Swap ``MockLLM`` for a real LLM
(``llama_index.llms.openai.OpenAI(...)``) to chat for real.
"""

from __future__ import annotations

import argparse
import tempfile

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall

from layered_memory import LayeredMemory
from llamaindex_layered_memory import LayeredChatMemory


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default=None, help="memory directory (default: a temporary one)")
    parser.add_argument("--embedder", default="default", help="'default' (local offline model) or 'none' (BM25 only)")
    args = parser.parse_args(argv)
    path = args.path or tempfile.mkdtemp(prefix="layered-memory-")

    with LayeredMemory.embedded(path, embedder=args.embedder) as mem:
        # what the bot knew before this chat: an earlier conversation and a profile
        mem.add_message(message_id="tg-1", chat_id="telegram:1", user_id="ann", content="I moved to Kazan last spring")
        mem.set_user_data("ann", {"name": "Ann", "language": "English"})

        llm = MockLLMWithChatMemoryOfLastCall(max_tokens=8)  # offline stand-in that records its input
        memory = LayeredChatMemory.from_defaults(mem, user_id="ann", session_id="web:1", token_limit=1500)
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt="You are a friendly assistant.")

        for question in ["Hi! Any tips for a weekend in my city, Kazan?", "What should I pack for the trip?"]:
            print(f"user> {question}")
            print(f"bot>  {engine.chat(question)}")

        print("\nWhat the LLM received on the last turn:")
        for m in llm.last_chat_messages:
            print(f"  [{m.role.value}] {m.content}")
        print(f"\nStored in layered-memory (session web:1): {len(mem.get_session_messages('ann', 'web:1'))} messages")


if __name__ == "__main__":
    main()
