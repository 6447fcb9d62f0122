"""PersonaSwitch: keep one system message, first, that matches the state's persona.

The semantics of LangChain4j's chat memory: a conversation holds at most
one system message and it is always the first. Switching persona replaces
that message in place -- same position, same id -- so the history reads
as one conversation whose instructions changed, and every checkpoint
stores only the one changed message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flowgraph.messages import (
    REMOVE_ALL_MESSAGES,
    AnyMessage,
    RemoveMessage,
    SystemMessage,
)
from flowgraph.nodes._state import messages_of, state_value, state_variables
from flowgraph.prompts import PromptTemplate

__all__ = ["PersonaSwitch"]

PERSONA_METADATA_KEY = "persona"
"""The system message's metadata key that names the persona it was written for."""


class PersonaSwitch:
    """A node that makes `messages[0]` the system message of the state's current persona.

    `personas` maps a persona name to its instructions: a string, or a
    `SystemPromptTemplate` rendered from the state's fields
    (`"You help {user_name} with ${language}."`). The state field `key`
    names the current persona.

    - the system message already says what the persona says: no update at
      all (no new message, no new id, nothing written to the checkpoint);
    - a different persona (or the template now renders differently): the
      system message is replaced in place, keeping its id and position;
    - no system message yet: one is put first;
    - system messages anywhere else are removed (at most one, always first).
    """

    node_kind = "persona"

    def __init__(
        self,
        personas: Mapping[str, str | PromptTemplate],
        key: str = "persona",
        *,
        messages_key: str = "messages",
    ) -> None:
        if not personas:
            raise ValueError("PersonaSwitch needs at least one persona")
        for name, persona in personas.items():
            if not isinstance(persona, (str, PromptTemplate)):
                raise TypeError(
                    f"Persona '{name}' must be a string or a SystemPromptTemplate, "
                    f"not {type(persona).__name__}"
                )
        self.personas: dict[str, str | PromptTemplate] = dict(personas)
        self.key = key
        self.messages_key = messages_key

    def __repr__(self) -> str:
        return f"PersonaSwitch([{', '.join(self.personas)}], key={self.key!r})"

    def instructions(self, state: Any) -> tuple[str, str]:
        """(persona name, system text) for `state`; an unknown persona is an error."""
        name = state_value(state, self.key, who="PersonaSwitch")
        persona = self.personas.get(name) if isinstance(name, str) else None
        if persona is None:
            raise ValueError(
                f"Persona {name!r} (state field '{self.key}') is not one of: "
                f"{', '.join(self.personas)}; add it to PersonaSwitch(personas=...)"
            )
        if isinstance(persona, str):
            return name, persona
        return name, persona.render(state_variables(state, persona.variables))

    def __call__(self, state: Any) -> dict[str, list[Any]] | None:
        """The update that installs the current persona, or None when it is in place."""
        name, text = self.instructions(state)
        messages: list[AnyMessage] = list(
            messages_of(state, self.messages_key, who="PersonaSwitch")
        )
        first = messages[0] if messages else None
        extra = [m for m in messages[1:] if isinstance(m, SystemMessage)]
        if (
            isinstance(first, SystemMessage)
            and first.id is not None
            and all(m.id is not None for m in extra)
        ):
            removals: list[Any] = [RemoveMessage(m.id) for m in extra]
            if first.content == text:
                return {self.messages_key: removals} if removals else None
            metadata = {**first.metadata, PERSONA_METADATA_KEY: name}
            replaced = SystemMessage(content=text, id=first.id, name=first.name, metadata=metadata)
            return {self.messages_key: [replaced, *removals]}
        system = SystemMessage(content=text, metadata={PERSONA_METADATA_KEY: name})
        if not messages:
            return {self.messages_key: [system]}
        # no system message first (or one without an id): rebuild the list with the
        # system message in front; the other messages keep their ids and order
        rest = [m for m in messages if not isinstance(m, SystemMessage)]
        return {self.messages_key: [RemoveMessage(REMOVE_ALL_MESSAGES), system, *rest]}
