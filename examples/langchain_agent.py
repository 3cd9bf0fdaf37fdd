"""A LangChain v1 agent with layered memory: context injected before the model, each turn saved
after it, and memory tools bound to the user (qdrant_search_memory, search, topic_search, list_tasks).

Run: python examples/langchain_agent.py [data_dir]
A scripted fake tool-calling model stands in for a real one.
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage

from langchain_layered_memory import LayeredMemoryMiddleware, create_memory_tools
from layered_memory import LayeredMemory


class ScriptedModel(FakeMessagesListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def main(path: str) -> str:
    with LayeredMemory.embedded(path, embedder="none") as mem:
        mem.add_message(message_id="m-old", chat_id="telegram:42", user_id="u1", content="My flight to Lisbon is on May 3rd")
        mem.create_task("u1", "Book a hotel in Lisbon")
        model = ScriptedModel(responses=[
            AIMessage("", tool_calls=[{"name": "qdrant_search_memory", "args": {"query_text": "flight Lisbon"}, "id": "c1"}]),
            AIMessage("", tool_calls=[{"name": "list_tasks", "args": {"status": "open"}, "id": "c2"}]),
            AIMessage("Your flight is on May 3rd, and you still need to book a hotel."),
        ])
        agent = create_agent(
            model,
            tools=create_memory_tools(mem, user_id="u1"),
            system_prompt="You are a travel assistant.",
            middleware=[LayeredMemoryMiddleware(mem)],
        )
        out = agent.invoke(
            {"messages": [HumanMessage("When do I fly, and what is left to do?")]},
            config={"configurable": {"thread_id": "web:7", "user_id": "u1"}},
        )
        for m in out["messages"]:
            print(f"{m.type}: {m.content or m.tool_calls}")
        saved = mem.get_session_messages("u1", "web:7")
        print(f"{len(saved)} messages saved in session web:7")
        return out["messages"][-1].content


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="lm-example-"))
