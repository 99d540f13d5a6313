"""What Model, Link and Joint handles share: a world, a model name and the model's generation.

Handles hold names and indices, never arrays: each call looks the model up in its world, so a
handle of a removed model raises ModelNotFound (and ``valid()`` is False), even if another model
with the same name was inserted since.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .calls import scenario_methods
from .entry import ModelEntry
from .world import entity_id

if TYPE_CHECKING:
    from .world import World


@scenario_methods
class Handle:
    """Base of the object-API handles."""

    def __init__(self, world: World, entry: ModelEntry) -> None:
        self._world = world
        self._model_name = entry.name
        self._generation = entry.generation

    @property
    def _entry(self) -> ModelEntry:
        return self._world._entry(self._model_name, self._generation)

    def _scoped(self) -> str:
        raise NotImplementedError

    def valid(self) -> bool:
        """Whether the entity still exists in its world."""
        entry = self._world._entries.get(self._model_name)
        return self._world.valid() and entry is not None and entry.generation == self._generation

    def id(self) -> int:
        """A unique non-zero id (a hash of the world name and the scoped name)."""
        return entity_id(f"{self._world.name()}::{self._scoped()}")

    def entity(self) -> int:
        """The id of this entity (there is no Gazebo entity)."""
        return self.id()

    def to_gazebo(self) -> Any:
        """ScenarIO's cast to the Gazebo class: this handle itself."""
        return self

    def _insert_plugin(self, plugin: Any, class_name: str = "", context: str = "") -> bool:
        return self._world._insert_plugin(plugin, class_name, context, handle=self)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._world is other._world and self._scoped() == other._scoped() and (
            self._generation == other._generation
        )

    def __hash__(self) -> int:
        return hash((id(self._world), self._scoped(), self._generation))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._scoped()!r})"
