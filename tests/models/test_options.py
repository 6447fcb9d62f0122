"""ChatOptions layering, tool normalisation, init_chat_model and the package surface."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import flowgraph.models
from flowgraph.models import (
    AnthropicChatModel,
    ChatModel,
    ChatOptions,
    OllamaChatModel,
    OpenAIChatModel,
    ScriptedChatModel,
    ToolSpec,
    init_chat_model,
    tool_specs,
)


def test_the_most_specific_non_none_field_wins() -> None:
    model = ChatOptions(model="a", temperature=1.0, max_tokens=100, extra={"x": 1, "y": 1})
    node = ChatOptions(temperature=0.5, stop="END", extra={"y": 2})
    call = ChatOptions(max_tokens=5, extra={"z": 3})
    merged = ChatOptions.merge(model, node, None, call)
    assert merged == ChatOptions(
        model="a",
        temperature=0.5,
        max_tokens=5,
        stop=("END",),
        extra={"x": 1, "y": 2, "z": 3},
    )
    assert ChatOptions.merge() == ChatOptions()


def test_options_are_frozen_and_keyword_only() -> None:
    options = ChatOptions(stop=["a", "b"])
    assert options.stop == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.temperature = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        ChatOptions("gpt")  # type: ignore[misc]


class Lookup(BaseModel):
    """Look a word up."""

    word: str


class DuckTool:
    name = "duck"
    description = "Quacks."

    @property
    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"loud": {"type": "boolean"}}}


def test_tools_of_every_accepted_shape_normalise_to_specs() -> None:
    specs = tool_specs(
        [
            DuckTool(),
            Lookup,
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
            {"name": "g", "description": "G."},
            ToolSpec("h"),
        ]
    )
    assert [(s.name, s.description) for s in specs] == [
        ("duck", "Quacks."),
        ("Lookup", "Look a word up."),
        ("f", ""),
        ("g", "G."),
        ("h", ""),
    ]
    assert specs[1].parameters == Lookup.model_json_schema()
    assert specs[3].parameters == {"type": "object", "properties": {}}
    with pytest.raises(TypeError, match="Cannot describe"):
        tool_specs([42])


def test_every_adapter_is_a_chat_model() -> None:
    for model in (
        OpenAIChatModel("m", api_key="k"),
        OllamaChatModel("m"),
        AnthropicChatModel("m", api_key="k"),
        ScriptedChatModel(["hi"]),
    ):
        assert isinstance(model, ChatModel)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "FLOWGRAPH_MODEL",
        "FLOWGRAPH_BASE_URL",
        "FLOWGRAPH_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "DEEPSEEK_API_KEY",
        "OLLAMA_HOST",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_init_chat_model_reads_the_spec_and_the_providers_variables(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    clean_env.setenv("DEEPSEEK_API_KEY", "sk-deep")
    openai = init_chat_model("openai:gpt-4o-mini", max_retries=5)
    assert isinstance(openai, OpenAIChatModel)
    assert (openai.model, openai.api_key, openai.max_retries) == ("gpt-4o-mini", "sk-openai", 5)
    assert openai.base_url == "https://api.openai.com/v1"
    deepseek = init_chat_model("deepseek:deepseek-chat")
    assert (deepseek.base_url, deepseek.api_key) == ("https://api.deepseek.com/v1", "sk-deep")
    ollama = init_chat_model("ollama:qwen3:8b")
    assert isinstance(ollama, OllamaChatModel) and ollama.model == "qwen3:8b"
    assert isinstance(init_chat_model("claude-sonnet-4-5"), AnthropicChatModel)
    assert init_chat_model("gpt-4o").provider == "openai"


def test_flowgraph_variables_win_over_the_providers(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FLOWGRAPH_MODEL", "llamacpp:tiny")
    clean_env.setenv("FLOWGRAPH_BASE_URL", "http://127.0.0.1:18080/v1")
    clean_env.setenv("FLOWGRAPH_API_KEY", "local")
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    model = init_chat_model()
    assert isinstance(model, OpenAIChatModel)
    assert (model.model, model.base_url, model.api_key) == (
        "tiny",
        "http://127.0.0.1:18080/v1",
        "local",
    )
    explicit = init_chat_model(api_key="given", base_url="http://h/v1")
    assert (explicit.api_key, explicit.base_url) == ("given", "http://h/v1")


def test_a_providers_key_is_never_sent_to_another_server(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    clean_env.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert OpenAIChatModel("m").api_key == "sk-openai"
    assert OpenAIChatModel("m", base_url="https://api.openai.com/v1").api_key == "sk-openai"
    assert OpenAIChatModel("m", base_url="http://127.0.0.1:8080/v1").api_key is None
    assert init_chat_model("vllm:m").api_key is None
    assert AnthropicChatModel("m").api_key == "sk-ant"
    assert AnthropicChatModel("m", base_url="https://proxy.example").api_key is None


def test_init_chat_model_errors_say_what_to_write(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="FLOWGRAPH_MODEL"):
        init_chat_model()
    with pytest.raises(ValueError, match="provider:model"):
        init_chat_model("mistral-large")


def test_all_is_complete_and_sorted() -> None:
    public = {name for name in dir(flowgraph.models) if not name.startswith("_")}
    modules = {"anthropic", "ollama", "openai", "scripted"}
    assert set(flowgraph.models.__all__) == public - modules
    assert flowgraph.models.__all__ == sorted(
        flowgraph.models.__all__, key=lambda n: (not n.isupper(), not n[0].isupper(), n)
    )


ALLOWED = {
    "flowgraph.errors",
    "flowgraph._ids",
    "flowgraph._context",
    "flowgraph._hooks",
    "flowgraph._lazy",
    "flowgraph.messages",
    "flowgraph.reducers",
    "flowgraph.state",
    "flowgraph.tools",
    "flowgraph.models",
}


def test_models_import_only_lower_layers() -> None:
    root = Path(flowgraph.models.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("flowgraph"):
                    layer = ".".join(name.split(".")[:2])
                    assert layer in ALLOWED, f"{path.name} imports {name}"
