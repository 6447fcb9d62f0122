"""PromptTemplate / SystemPromptTemplate: {var} and ${var}, escapes, errors naming the variable."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from flowgraph import HumanMessage, SystemMessage
from flowgraph.prompts import PromptTemplate, SystemPromptTemplate


@pytest.mark.parametrize(
    "template",
    [
        "Tell me a joke about {topic} in {language}.",
        "Tell me a joke about ${topic} in ${language}.",
        "Tell me a joke about {topic} in ${language}.",
        "Tell me a joke about { topic } in ${ language }.",
    ],
)
def test_both_placeholder_styles(template: str) -> None:
    prompt = PromptTemplate(template)
    assert prompt.variables == ("topic", "language")
    assert prompt.format(topic="cats", language="French") == "Tell me a joke about cats in French."


def test_render_takes_a_mapping_and_keywords() -> None:
    prompt = PromptTemplate("{a}-{b}")
    assert prompt.render({"a": 1, "b": 2}) == "1-2"
    assert prompt.render({"a": 1, "b": 2}, b=3) == "1-3"
    assert prompt.render(a=None, b=2.5) == "None-2.5"


def test_extra_variables_are_ignored() -> None:
    assert PromptTemplate("hi {name}").format(name="Ada", unused=1) == "hi Ada"


def test_a_variable_used_twice() -> None:
    prompt = PromptTemplate("{x} and {x} and ${x}")
    assert prompt.variables == ("x",)
    assert prompt.format(x="y") == "y and y and y"


def test_missing_variable_names_it() -> None:
    prompt = PromptTemplate("Review this ${language} code: {code}")
    with pytest.raises(ValueError) as caught:
        prompt.format(code="x = 1")
    assert str(caught.value) == (
        "Prompt template is missing variable(s) 'language' (it uses: language, code); "
        "pass language=..."
    )


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ('a JSON object: {{"k": {v}}}', 'a JSON object: {"k": 1}'),
        ("shell: ${{HOME}} is ${v}", "shell: ${HOME} is 1"),
        ("{{v}}", "{v}"),
        ("{{{v}}}", "{1}"),
        ("cost: $5 for {v}", "cost: $5 for 1"),
        ("$$ {v} $", "$$ 1 $"),
        ("no placeholders", "no placeholders"),
        ("", ""),
    ],
)
def test_literal_braces_are_escaped_by_doubling(template: str, text: str) -> None:
    assert PromptTemplate(template).render(v=1) == text


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("a { b", "Unmatched '{' at position 2.*write '{{'"),
        ("a } b", "Unmatched '}' at position 2.*write '}}'"),
        ("{}", "Placeholder '{}' at position 0 is not a variable name"),
        ("${1x}", r"Placeholder '\${1x}' at position 0 is not a variable name"),
        ("{a b}", "Placeholder '{a b}'"),
        ("{a-b}", "Placeholder '{a-b}'"),
    ],
)
def test_malformed_templates_fail_when_built(template: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PromptTemplate(template)


@dataclass
class User:
    name: str
    plan: str


def test_dotted_placeholders_read_fields_and_keys() -> None:
    prompt = PromptTemplate("{user.name} is on ${user.plan}; lang {prefs.language}")
    assert prompt.variables == ("user", "prefs")
    assert (
        prompt.render(user=User("Ada", "pro"), prefs={"language": "en"}) == "Ada is on pro; lang en"
    )
    with pytest.raises(ValueError, match=r"\{user.plan\}: HumanMessage has no field 'plan'"):
        PromptTemplate("{user.plan}").render(user=HumanMessage("x"))
    with pytest.raises(ValueError, match=r"\{prefs.language\}: 'language' is not in the value"):
        PromptTemplate("{prefs.language}").render(prefs={})


def test_partial() -> None:
    prompt = PromptTemplate("{greeting}, {name}!").partial(greeting="Hello")
    assert prompt.variables == ("name",)
    assert prompt.format(name="Ada") == "Hello, Ada!"
    assert prompt.format(name="Ada", greeting="Hi") == "Hi, Ada!"


def test_messages() -> None:
    human = PromptTemplate("Summarise {doc}").to_message(doc="the report")
    assert isinstance(human, HumanMessage)
    assert human.content == "Summarise the report"
    system = SystemPromptTemplate("You are ${role}.").to_message({"role": "a reviewer"})
    assert isinstance(system, SystemMessage)
    assert system.content == "You are a reviewer."
    assert isinstance(SystemPromptTemplate("x").partial(), SystemPromptTemplate)


def test_value_semantics() -> None:
    assert PromptTemplate("a {b}") == PromptTemplate("a {b}")
    assert PromptTemplate("a {b}") != SystemPromptTemplate("a {b}")
    assert PromptTemplate("a {b}") != PromptTemplate("a {b}").partial(b=1)
    assert len({PromptTemplate("x"), PromptTemplate("x")}) == 1
    assert repr(SystemPromptTemplate("hi {x}")) == "SystemPromptTemplate('hi {x}')"


def test_a_template_is_a_string() -> None:
    with pytest.raises(TypeError, match="A prompt template is a string, not int"):
        PromptTemplate(3)  # type: ignore[arg-type]
