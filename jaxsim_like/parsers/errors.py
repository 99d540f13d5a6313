"""The exception for bad model input, the warning for input that loads after a documented fix,
and the switch that makes such warnings errors."""

from __future__ import annotations

import contextlib
import warnings
from typing import Iterator


def _located(message: str, file: str | None, line: int | None, element: str | None) -> str:
    where = file if file is not None else "<string>"
    if line is not None:
        where = f"{where}:{line}"
    prefix = f"{where}: "
    if element:
        prefix += f"{element}: "
    return prefix + message


class _Located:
    """``file``, ``line``, ``element`` and the bare ``reason`` of a load problem; the message is
    the reason prefixed with its location."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        element: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.element = element
        self.reason = message
        super().__init__(_located(message, file, line, element))


class ModelLoadError(_Located, ValueError):
    """A model, world or SRDF source that cannot be loaded.

    The message names the file, the line and the element where the problem is,
    as far as they are known: ``robot.urdf:12: <joint name="knee">: unknown type 'hinge'``.
    """


class ModelLoadWarning(_Located, UserWarning):
    """A model that loads, but not exactly as written: an inconsistent inertia regularised, a
    massless moving subtree given a small mass, a mimic naming a joint the model does not have
    dropped, a mesh file not found. Located like :class:`ModelLoadError` (``file``, ``line``, ``element``);
    ``load_model(..., strict=True)`` raises that error instead.
    """

    def as_error(self) -> ModelLoadError:
        """The :class:`ModelLoadError` with the same location and message."""
        return ModelLoadError(self.reason, file=self.file, line=self.line, element=self.element)


def warn(message: str, *, file: str | None = None, line: int | None = None, element: str | None = None) -> None:
    """Issue a located :class:`ModelLoadWarning`."""
    warnings.warn(ModelLoadWarning(message, file=file, line=line, element=element), stacklevel=3)


@contextlib.contextmanager
def strictness(strict: bool) -> Iterator[None]:
    """With ``strict``, the first :class:`ModelLoadWarning` raised inside raises :class:`ModelLoadError`.

    Uses :func:`warnings.catch_warnings`, so it changes the process's warning filters while
    the block runs (not thread-safe, as that function).
    """
    if not strict:
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelLoadWarning)
        try:
            yield
        except ModelLoadWarning as warning:
            raise warning.as_error() from None
