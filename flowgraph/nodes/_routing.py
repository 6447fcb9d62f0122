"""Routing: `tools_condition` after a model node; `Router` over predicates or a model's choice."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, create_model

from flowgraph.graph import END
from flowgraph.messages import AIMessage, BaseMessage, SystemMessage
from flowgraph.nodes._state import messages_of

if TYPE_CHECKING:  # the model layer loads with the first ModelRouter, not with tools_condition
    from flowgraph.models import ChatModel, ChatOptions

__all__ = ["ModelRouter", "Router", "tools_condition"]


def tools_condition(state: Any, *, messages_key: str = "messages") -> Literal["tools", "__end__"]:
    """`"tools"` if the last message is an AIMessage asking for tools, else `END`.

    Calls whose arguments did not parse count too: the ToolNode answers
    them with an error the model can correct (a provider rejects a
    conversation that leaves a call unanswered).
    """
    messages = messages_of(state, messages_key, who="tools_condition")
    if not messages:
        raise ValueError(
            f"tools_condition found no messages in state field '{messages_key}'; it routes on "
            "the last AIMessage, so use it after a node that calls the model"
        )
    last = messages[-1]
    if isinstance(last, AIMessage) and (
        last.has_tool_calls or any(c.id and c.name for c in last.invalid_tool_calls)
    ):
        return "tools"
    return END  # type: ignore[return-value]  # END is the literal "__end__"


Predicate = Callable[[Any], object]


class _Routes:
    """What every router shares: its route names, a default, and an optional state key."""

    node_kind = "router"

    def __init__(self, names: Sequence[str], default: str | None, key: str | None) -> None:
        self._names = tuple(names)
        self.default = default
        self.key = key

    @property
    def destinations(self) -> tuple[str, ...]:
        """Every route this router can choose: the named routes, then the default."""
        names = list(self._names)
        if self.default is not None and self.default not in self._names:
            names.append(self.default)
        return tuple(names)

    def _choices(self) -> str:
        return ", ".join(self.destinations)

    def resolve(self, name: object) -> str:
        """`name` if it is one of the routes; otherwise the default, or an error listing them.

        For choices made elsewhere (a model's structured answer, a state field).
        """
        if isinstance(name, str) and name in self.destinations:
            return name
        if self.default is None:
            raise ValueError(
                f"{name!r} is not a route of this router; choose one of: {self._choices()}"
            )
        return self.default

    def _output(self, name: str) -> Any:
        return name if self.key is None else {self.key: name}

    def __repr__(self) -> str:
        key = f", key={self.key!r}" if self.key else ""
        return f"{type(self).__name__}([{self._choices()}], default={self.default!r}{key})"


class Router(_Routes):
    """Choose the next route from the state: named predicates, checked in order.

    >>> router = Router({"reviewer": lambda s: "review" in s["text"]}, default="chat")
    >>> router({"text": "please review my diff"}), router({"text": "hi"})
    ('reviewer', 'chat')

    The first predicate that is true names the route; if none is, `default`
    does (without a default, that is an error listing the routes). Use it
    as the path of a conditional edge (`add_conditional_edges("triage",
    router, router.destinations)` lets diagrams and validation see every
    route), or with `key=` as a node that writes the chosen route to that
    state field (`{"persona": "reviewer"}`), for a PersonaSwitch or a later
    edge to read.
    """

    def __init__(
        self,
        routes: Mapping[str, Predicate],
        default: str | None = None,
        *,
        key: str | None = None,
    ) -> None:
        if not routes and default is None:
            raise ValueError("A Router needs at least one route or a default")
        for name, predicate in routes.items():
            if not callable(predicate):
                raise TypeError(
                    f"Route '{name}' must map to a predicate over the state "
                    f"(e.g. lambda state: ...), not {type(predicate).__name__}"
                )
        super().__init__(list(routes), default, key)
        self.routes: dict[str, Predicate] = dict(routes)

    def route(self, state: Any) -> str:
        """The name of the first route whose predicate holds for `state`, else the default."""
        for name, predicate in self.routes.items():
            try:
                chosen = predicate(state)
            except Exception as exc:
                exc.add_note(f"(in the predicate of route '{name}' of a Router)")
                raise
            if chosen:
                return name
        if self.default is None:
            raise ValueError(
                f"No route matched and the Router has no default; routes: {self._choices()}. "
                "Give Router a default=..."
            )
        return self.default

    def __call__(self, state: Any) -> Any:
        """The chosen route's name, or `{key: name}` when the router is a node (`key=`)."""
        return self._output(self.route(state))

    @staticmethod
    def from_model(
        model: ChatModel,
        routes: Mapping[str, str] | Sequence[str],
        default: str | None = None,
        *,
        key: str | None = None,
        instructions: str | None = None,
        options: ChatOptions | None = None,
        messages_key: str = "messages",
    ) -> ModelRouter:
        """A router whose model picks the route (structured output); see `ModelRouter`."""
        return ModelRouter(
            model,
            routes,
            default,
            key=key,
            instructions=instructions,
            options=options,
            messages_key=messages_key,
        )


_ROUTING_PROMPT = (
    "Decide which route the conversation should take next. The routes are:\n"
    "{routes}\n"
    'Answer with a JSON object {{"route": "<one of: {names}>"}} and nothing else.'
)


class ModelRouter(_Routes):
    """A router whose chat model chooses among named routes by structured output.

    `routes` maps each route to a description the model reads (or lists
    names alone). The model sees a routing instruction (your
    `instructions` first, if given) and the conversation without its own
    system message, and answers `{"route": name}`. A name that is not a
    route -- or a reply that does not parse -- goes to `default`; without
    a default it is an error listing the routes. Like `Router`, use it as
    a conditional-edge path or, with `key=`, as a node; it is async, so the
    model call never blocks the event loop.
    """

    def __init__(
        self,
        model: ChatModel,
        routes: Mapping[str, str] | Sequence[str],
        default: str | None = None,
        *,
        key: str | None = None,
        instructions: str | None = None,
        options: ChatOptions | None = None,
        messages_key: str = "messages",
    ) -> None:
        if isinstance(routes, str):
            raise TypeError("ModelRouter routes are a list of names or a {name: description}")
        described = dict(routes) if isinstance(routes, Mapping) else dict.fromkeys(routes, "")
        if not described:
            raise ValueError("A ModelRouter needs at least one route for the model to choose")
        super().__init__(list(described), default, key)
        self.model = model
        self.descriptions = described
        self.messages_key = messages_key
        listing = "\n".join(
            f"- {name}: {text}" if text else f"- {name}" for name, text in described.items()
        )
        prompt = _ROUTING_PROMPT.format(routes=listing, names=", ".join(described))
        self.prompt = f"{instructions}\n\n{prompt}" if instructions else prompt
        """The system message the model routes with."""
        self.choice_model: type[BaseModel] = create_model(
            "RouteChoice",
            route=(
                str,
                Field(
                    description="The chosen route.",
                    json_schema_extra={"enum": list(described)},
                ),
            ),
        )
        from flowgraph.models import ChatOptions

        self.options = ChatOptions.merge(options, ChatOptions(response_format=self.choice_model))

    def request(self, state: Any) -> list[BaseMessage]:
        """The messages the model is asked to route: the instruction, then the conversation."""
        conversation = messages_of(state, self.messages_key, who="ModelRouter")
        kept = [
            m
            for m in conversation
            if isinstance(m, BaseMessage) and not isinstance(m, SystemMessage)
        ]
        return [SystemMessage(content=self.prompt), *kept]

    def choice(self, reply: AIMessage) -> str:
        """The route a reply names: its parsed structured output, else its bare text."""
        parsed = reply.metadata.get("parsed")
        if isinstance(parsed, BaseModel):
            name: object = getattr(parsed, "route", None)
        elif isinstance(parsed, Mapping):
            name = parsed.get("route")
        else:
            name = reply.text.strip().strip("\"'`")
        return self.resolve(name)

    def route(self, state: Any) -> str:
        """Ask the model (blocking) and return the route it chose."""
        return self.choice(self.model.invoke(self.request(state), options=self.options))

    async def aroute(self, state: Any) -> str:
        """Ask the model without blocking the event loop."""
        return self.choice(await self.model.ainvoke(self.request(state), options=self.options))

    async def __call__(self, state: Any) -> Any:
        """The chosen route's name, or `{key: name}` when the router is a node (`key=`)."""
        return self._output(await self.aroute(state))
