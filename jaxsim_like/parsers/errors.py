"""The one exception type for bad model input."""

from __future__ import annotations


class ModelLoadError(ValueError):
    """A model, world or SRDF source that cannot be loaded.

    The message names the file, the line and the element where the problem is,
    as far as they are known: ``robot.urdf:12: <joint name="knee">: unknown type 'hinge'``.
    """

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
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.file if self.file is not None else "<string>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        prefix = f"{where}: "
        if self.element:
            prefix += f"{self.element}: "
        return prefix + self.reason
