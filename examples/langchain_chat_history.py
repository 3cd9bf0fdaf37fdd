"""A LangChain chain with layered memory as its chat history (RunnableWithMessageHistory).

Run: python examples/langchain_chat_history.py [data_dir]
A scripted fake chat model stands in for a real one; swap in ChatOpenAI(...) etc. to talk for real.
"""

from __future__ import annotations

import sys
import tempfile

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from langchain_layered_memory import LayeredMemoryRetriever, with_layered_memory
from layered_memory import LayeredMemory


def main(path: str) -> list[str]:
    with LayeredMemory.embedded(path, embedder="none") as mem:
        mem.set_user_data("u1", {"name": "Ann"})
        prompt = ChatPromptTemplate.from_messages(
            [("system", "You are a friendly assistant."), MessagesPlaceholder("history"), ("human", "{question}")]
        )
        model = FakeListChatModel(responses=["Hi Ann! Kazan is lovely.", "You told me you live in Kazan."])
        # RunnableWithMessageHistory over layered memory; mode="context" (the default): one system message with
        # the summary, user data and memory recalled for this question, then the short-term window
        chain = with_layered_memory(prompt | model, mem, input_messages_key="question", history_messages_key="history")
        cfg = {"configurable": {"user_id": "u1", "session_id": "telegram:42"}}
        answers = [
            chain.invoke({"question": "Hello, I live in Kazan."}, config=cfg),
            chain.invoke({"question": "Where do I live?"}, config=cfg),
        ]
        for a in answers:
            print("assistant:", a.content)
        docs = LayeredMemoryRetriever(memory=mem, user_id="u1", k=2).invoke("Kazan")
        print("retrieved:", [d.page_content for d in docs])
        return [d.page_content for d in docs]


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="lm-example-"))
