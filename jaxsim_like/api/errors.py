"""The exceptions of ScenarIO's object API, with its message formats.

As in ScenarIO, methods documented "True for success, false otherwise" return False and log the
reason (see :mod:`.calls`); these exceptions propagate from them only where the references name
an exception: unknown links, joints and models, invalid DoF indices, Gazebo-only symbols. Getters,
which have no False to return, raise them. All but :class:`NotImplementedError` derive from
:class:`RuntimeError`, as the C++ classes derive from ``std::runtime_error``.
"""

from __future__ import annotations

import builtins


class _NamedError(RuntimeError):
    """A runtime error about an entity, printed ``[name] message`` as ScenarIO does."""

    def __init__(self, message: str, name: str = "") -> None:
        self.message = message
        self.name = name
        super().__init__(f"[{name}] {message}" if name else message)


class LinkError(_NamedError):
    """An invalid operation on a link (``LinkError(message, link_name)``)."""


class JointError(_NamedError):
    """An invalid operation on a joint (``JointError(message, joint_name)``)."""


class ModelError(_NamedError):
    """An invalid operation on a model (``ModelError(message, model_name)``)."""


class WorldError(_NamedError):
    """An invalid operation on a world (``WorldError(message, world_name)``)."""


class SimulatorError(RuntimeError):
    """A simulator used out of its lifecycle (running before ``initialize``, after ``close``...)."""


class DOFMismatch(RuntimeError):
    """Data whose size does not match the degrees of freedom, or a DoF index out of range."""

    def __init__(self, joint_dofs: int, data_dofs: int, joint_name: str = "") -> None:
        self.joint_dofs = joint_dofs
        self.data_dofs = data_dofs
        self.joint_name = joint_name
        prefix = f"[{joint_name}] " if joint_name else ""
        super().__init__(f"{prefix}Nr of DoFs joint={joint_dofs} data={data_dofs}")


class DOFIndexError(DOFMismatch):
    """A DoF index other than 0 (the references: "std::runtime_error if the DOF is not valid")."""

    def __init__(self, dof: int, joint_name: str = "") -> None:
        super().__init__(1, dof, joint_name)


class _NotFound(RuntimeError):
    _what = ""

    def __init__(self, name: str, hint: str = "") -> None:
        self.name = name
        message = f"[{name}] {self._what} does not exist"
        super().__init__(f"{message}; {hint}" if hint else message)


class LinkNotFound(_NotFound):
    """No link with that name in the model."""

    _what = "Link"


class JointNotFound(_NotFound):
    """No joint with that name in the model."""

    _what = "Joint"


class ModelNotFound(_NotFound):
    """No model with that name in the world."""

    _what = "Model"


class NotImplementedError(builtins.NotImplementedError):
    """A ScenarIO symbol that only exists because of Gazebo (GUI, shared-library plugins, Fuel).

    The message names the symbol and the nearest equivalent in this API.
    """

    def __init__(self, symbol: str, alternative: str = "") -> None:
        self.symbol = symbol
        message = f"Symbol not implemented: {symbol}"
        super().__init__(f"{message}. {alternative}" if alternative else message)
