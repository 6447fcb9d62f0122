"""The official async client against the same server: threads, wait, stream, join, cancel."""

from __future__ import annotations

import asyncio

from langgraph_sdk import get_client

from .conftest import FakeLLM, Serve

HI = {"messages": [{"role": "user", "content": "hi"}]}


def test_async_client_end_to_end(serve: Serve, llm: FakeLLM) -> None:
    server = serve(None, "agent", "slow", "chat", env={"FG_TEST_LLM_URL": llm.url})

    async def scenario() -> dict[str, object]:
        async with get_client(url=server.url, api_key=None) as client:
            thread = await client.threads.create(metadata={"via": "async"})
            thread_id = thread["thread_id"]
            paused = await client.runs.wait(thread_id, "agent", input=HI)
            resumed = [
                part.event
                async for part in client.runs.stream(
                    thread_id, "agent", command={"resume": "ok"}, stream_mode="updates"
                )
            ]
            tokens = [
                part.data[0]["content"]
                async for part in client.runs.stream(
                    None, "chat", input=HI, stream_mode="messages-tuple"
                )
                if part.event == "messages"
            ]
            slow_thread = (await client.threads.create())["thread_id"]
            background = await client.runs.create(slow_thread, "slow", input={"delay": 0.3})
            joined_events = [
                part.event
                async for part in client.runs.join_stream(slow_thread, background["run_id"])
            ]
            second = await client.runs.create(slow_thread, "slow", input={"delay": 0.5})
            await asyncio.sleep(0.2)
            await client.runs.cancel(slow_thread, second["run_id"], wait=True)
            return {
                "paused": paused,
                "resumed": resumed,
                "tokens": tokens,
                "joined": joined_events,
                "state": await client.threads.get_state(thread_id),
                "second": await client.runs.get(slow_thread, second["run_id"]),
                "found": await client.threads.search(metadata={"via": "async"}),
            }

    got = asyncio.run(scenario())

    assert got["paused"]["__interrupt__"][0]["value"] == {"question": "Approve?"}  # type: ignore[index]
    assert got["resumed"] == ["metadata", "updates"]
    assert "".join(got["tokens"]) == "".join(llm.words)  # type: ignore[arg-type]
    assert got["joined"][0] == "metadata" and "values" in got["joined"]  # type: ignore[index,operator]
    assert got["state"]["values"]["messages"][-1]["content"] == "answer: ok"  # type: ignore[index]
    assert got["second"]["status"] == "interrupted"  # type: ignore[index]
    assert len(got["found"]) == 1  # type: ignore[arg-type]
