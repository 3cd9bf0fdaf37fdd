"""``mode="context"`` (issue 18.1): memory is recalled for the message being answered and reaches the model as
one leading system message, which the OpenAI, Anthropic and Google chat classes all send as system text.

The payloads are what each provider class sends over the wire through its public ``invoke``, to a stub server on
loopback (``ProviderStub``: a dummy key, no network); a class whose package is not installed is skipped with the reason.
"""

from __future__ import annotations

import warnings
from datetime import datetime, timezone

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from langchain_layered_memory import LayeredChatMessageHistory, with_layered_memory
from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.testing import HashEmbedder

T0 = datetime(2024, 3, 1, tzinfo=timezone.utc).timestamp()
PAST = [
    ("user", "I used to drink matcha green tea every morning"),
    ("user", "my payments pod keeps crashing with OOMKilled after the deploy"),
    ("assistant", "raise the payments pod memory limit to 512Mi"),
    ("user", "I switched to green tea this week"),
    ("assistant", "green tea has less caffeine than coffee"),
    ("user", "which green tea is best in the morning?"),
    ("assistant", "sencha is a good morning green tea"),
]
QUESTION = "What was wrong with my payments pod?"


@pytest.fixture
def mem(tmp_path):
    settings = LayeredMemorySettings()
    settings.memory.short_term_window = 4  # the payments turns are older than the window
    settings.memory.relevant_memory_k = 1  # one line: the one recalled for the query
    m = LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(dim=64), settings=settings)
    m.add_messages([
        {"message_id": f"p{i}", "chat_id": "s1", "session_key": "s1", "user_id": "u1", "role": role, "content": text,
         "create_time": T0 + i}
        for i, (role, text) in enumerate(PAST)
    ])
    yield m
    m.close()


def capture(seen: list[list[BaseMessage]]) -> RunnableLambda:
    def model(prompt_value) -> AIMessage:  # noqa: ANN001
        seen.append(prompt_value.to_messages() if hasattr(prompt_value, "to_messages") else list(prompt_value))
        return AIMessage("answer")

    return RunnableLambda(model)


PROMPT = ChatPromptTemplate.from_messages(
    [("system", "You are a helpful bot."), MessagesPlaceholder("history"), ("human", "{question}")]
)
CFG = {"configurable": {"user_id": "u1", "session_id": "s1"}}


def leading_system(messages: list[BaseMessage]) -> tuple[list[str], list[BaseMessage]]:
    n = 0
    while n < len(messages) and isinstance(messages[n], SystemMessage):
        n += 1
    assert not any(isinstance(m, SystemMessage) for m in messages[n:]), [type(m).__name__ for m in messages]
    return [m.content for m in messages[:n]], messages[n:]


def test_context_is_recalled_for_the_message_being_answered(mem):
    seen: list[list[BaseMessage]] = []
    chain = with_layered_memory(PROMPT | capture(seen), mem, input_messages_key="question", history_messages_key="history")
    chain.invoke({"question": QUESTION}, config=CFG)
    system, rest = leading_system(seen[0])
    assert system[0] == "You are a helpful bot."
    memory = "\n".join(system[1:])
    assert "Relevant memory" in memory and "payments pod" in memory and "matcha" not in memory
    assert [m.content for m in rest][-1] == QUESTION
    assert "payments" not in "".join(str(m.content) for m in rest[:-1])  # older than the window: only as memory
    stored = mem.get_session_messages("u1", "s1")
    assert [m.content for m in stored[-2:]] == [QUESTION, "answer"]


async def test_async_chain_recalls_for_the_current_message_too(mem):
    seen: list[list[BaseMessage]] = []
    chain = with_layered_memory(PROMPT | capture(seen), mem, input_messages_key="question", history_messages_key="history")
    await chain.ainvoke({"question": QUESTION}, config=CFG)
    system, _ = leading_system(seen[0])
    assert "payments pod" in "\n".join(system)


def test_plain_runnable_with_message_history_recalls_for_the_stored_turn(mem):
    """What the wrapper fixes: LangChain's class reads the history before the input, so the recall runs
    for the last stored user message (green tea) and the payments turn is not in the context."""
    seen: list[list[BaseMessage]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chain = RunnableWithMessageHistory(
            PROMPT | capture(seen),
            lambda session_id: LayeredChatMessageHistory(mem, user_id="u1", session_id=session_id, mode="context"),
            input_messages_key="question", history_messages_key="history",
        )
    chain.invoke({"question": QUESTION}, config={"configurable": {"session_id": "s1"}})
    system, _ = leading_system(seen[0])
    assert "matcha" in "\n".join(system) and "payments" not in "\n".join(system)


def test_list_input_without_a_prompt_leads_with_one_system_message(mem):
    seen: list[list[BaseMessage]] = []
    chain = with_layered_memory(capture(seen), mem)
    chain.invoke([HumanMessage(QUESTION)], config=CFG)
    system, rest = leading_system(seen[0])
    assert len(system) == 1 and "payments pod" in system[0]
    assert rest[-1].content == QUESTION and rest[0].type == "human"


def test_missing_user_or_session_names_the_config(mem):
    chain = with_layered_memory(capture([]), mem)
    with pytest.raises(ValueError, match="configurable.*user_id"):
        chain.invoke([HumanMessage("hi")], config={"configurable": {"session_id": "s1"}})


def test_history_for_input_keeps_a_fixed_query_and_the_messages_mode(mem):
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1", mode="context", query="green tea")
    assert hist.for_input([HumanMessage(QUESTION)]) is hist
    plain = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1")
    assert plain.for_input([HumanMessage(QUESTION)]) is plain
    ctx = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1", mode="context").for_input([HumanMessage(QUESTION)])
    assert ctx.query == QUESTION and "payments pod" in ctx.messages[0].content


# -- the payloads of the provider chat classes, built offline --------------------------------------------


def model_input(mem) -> list[BaseMessage]:
    seen: list[list[BaseMessage]] = []
    chain = with_layered_memory(PROMPT | capture(seen), mem, input_messages_key="question", history_messages_key="history")
    chain.invoke({"question": QUESTION}, config=CFG)
    return seen[0]


class ProviderStub:
    """A loopback HTTP server that records each request body and answers as the provider would.

    The provider classes are driven through their public ``invoke`` with ``base_url`` pointed here, so
    the tests read the JSON each SDK actually sends (no private request builder of the integration)."""

    REPLIES = {
        "/v1/chat/completions": {
            "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "answer"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        },
        "/v1/messages": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "answer"}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
        ":generateContent": {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "answer"}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        },
    }

    def __init__(self) -> None:
        import http.server
        import json
        import threading

        self.bodies: list[dict] = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                stub.bodies.append(json.loads(body or b"{}"))
                path = self.path.split("?")[0]
                reply = next((r for suffix, r in stub.REPLIES.items() if path.endswith(suffix)), None)
                data = json.dumps(reply or {"error": f"no stub for {path}"}).encode()
                self.send_response(200 if reply else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    server = ProviderStub()
    yield server
    server.close()


def test_openai_payload_has_the_memory_in_leading_system_messages(mem, stub):
    langchain_openai = pytest.importorskip("langchain_openai")
    model = langchain_openai.ChatOpenAI(api_key="sk-test", model="gpt-4o-mini", base_url=stub.url + "/v1", max_retries=0)
    assert model.invoke(model_input(mem)).content == "answer"
    payload = stub.bodies[-1]
    roles = [m["role"] for m in payload["messages"]]
    first_other = next(i for i, r in enumerate(roles) if r != "system")
    assert "system" not in roles[first_other:] and roles[first_other] == "user" and roles[-1] == "user"
    assert any("payments pod" in m["content"] for m in payload["messages"][:first_other])


def test_anthropic_payload_moves_nothing_and_warns_nothing(mem, stub):
    langchain_anthropic = pytest.importorskip("langchain_anthropic")
    model = langchain_anthropic.ChatAnthropic(api_key="sk-test", model="claude-sonnet-4-5", base_url=stub.url, max_retries=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert model.invoke(model_input(mem)).content == "answer"
    # "A non-leading SystemMessage was moved ..." would be one of these (the SDK's model-deprecation notice is not)
    assert not [w for w in caught if "system" in str(w.message).casefold()], [str(w.message) for w in caught]
    payload = stub.bodies[-1]
    system = payload["system"]
    text = system if isinstance(system, str) else "\n".join(b["text"] for b in system)
    assert text.startswith("You are a helpful bot.") and "payments pod" in text
    assert [m["role"] for m in payload["messages"]][0] == "user"
    assert all(m["role"] in ("user", "assistant") for m in payload["messages"])


def test_google_payload_keeps_the_memory_in_the_system_instruction(mem, stub):
    genai = pytest.importorskip("langchain_google_genai")
    model = genai.ChatGoogleGenerativeAI(google_api_key="test", model="gemini-2.5-flash", base_url=stub.url, max_retries=0)
    assert model.invoke(model_input(mem)).content == "answer"
    payload = stub.bodies[-1]
    instruction = "\n".join(p["text"] for p in (payload.get("systemInstruction") or payload["system_instruction"])["parts"])
    assert instruction.startswith("You are a helpful bot.") and "payments pod" in instruction
    contents = payload["contents"]
    assert contents[-1]["parts"][0]["text"] == QUESTION
    assert contents[0]["role"] == "user"
