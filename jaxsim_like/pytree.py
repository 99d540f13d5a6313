"""Frozen dataclasses that are JAX pytrees: one declaration of their fields."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import jax

T = TypeVar("T")


def _replace(self: Any, **changes: Any) -> Any:
    """A copy with some fields changed (a traced field: no recompilation)."""
    return dataclasses.replace(self, **changes)


def pytree_dataclass(*, static: Sequence[str] = ()) -> Callable[[type[T]], type[T]]:
    """Decorate a class into a frozen dataclass registered as a pytree: every field is a traced
    leaf except the ``static`` ones (hashable, part of the compiled graph's key); the class gets
    a ``replace(**changes)`` unless it defines one."""

    def wrap(cls: type[T]) -> type[T]:
        if "replace" not in cls.__dict__:
            cls.replace = _replace
        cls = dataclasses.dataclass(frozen=True)(cls)
        names = [field.name for field in dataclasses.fields(cls)]
        unknown = set(static) - set(names)
        if unknown:
            raise TypeError(f"{cls.__name__} has no fields {sorted(unknown)}")
        data = [name for name in names if name not in static]
        return jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=list(static))

    return wrap
