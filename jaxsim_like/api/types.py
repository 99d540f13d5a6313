"""Value types and enums of the object API, as in ScenarIO (``scenario.core`` / ``scenario.gazebo``).

Vectors are tuples of floats, as ScenarIO returns them (``Tuple[float, float, float]``), and
the value types compare with ``==`` and print by value; quaternions are ``wxyz``. The enums are
``IntEnum`` with ScenarIO's integer values, and the module also has ScenarIO's flat constants
(``JointControlMode_position``, ``JointType_revolute``, ``PhysicsEngine_dart``,
``Verbosity_debug``...).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..simulation.control import DEFAULT_GAINS, JointControlMode


def vector(value: Any, size: int, name: str) -> np.ndarray:
    """``value`` as a float array of shape ``(size,)``; ValueError naming ``name`` otherwise."""
    array = np.asarray(value, dtype=float).reshape(-1) if np.ndim(value) else np.asarray([value], dtype=float)
    if array.shape != (size,):
        raise ValueError(f"{name} must have {size} elements, got {np.shape(value)}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite, got {array.tolist()}")
    return array


def as_tuple(values: Any) -> tuple[float, ...]:
    """``values`` flattened into a tuple of Python floats (what ScenarIO's getters return)."""
    return tuple(np.asarray(values, dtype=float).reshape(-1).tolist())


def unit_quaternion(value: Any, name: str = "orientation") -> np.ndarray:
    """A wxyz quaternion normalised to unit norm (one already unit to rounding is kept as given, so
    that it reads back exactly); ValueError if it is zero or not 4 numbers."""
    q = vector(value, 4, name)
    norm = np.linalg.norm(q)
    if norm == 0:
        raise ValueError(f"{name} must be a non-zero wxyz quaternion")
    return q if abs(norm - 1.0) <= 4 * np.finfo(float).eps else q / norm


class Pose:
    """A pose: ``position`` (3 floats) [m] and ``orientation`` (4 floats, wxyz quaternion)."""

    def __init__(self, position: Any = (0.0, 0.0, 0.0), orientation: Any = (1.0, 0.0, 0.0, 0.0)) -> None:
        self.position = position
        self.orientation = orientation

    @property
    def position(self) -> tuple[float, float, float]:
        return self._position

    @position.setter
    def position(self, value: Any) -> None:
        self._position = as_tuple(vector(value, 3, "position"))

    @property
    def orientation(self) -> tuple[float, float, float, float]:
        return self._orientation

    @orientation.setter
    def orientation(self, value: Any) -> None:
        self._orientation = as_tuple(vector(value, 4, "orientation"))

    @staticmethod
    def identity() -> Pose:
        """The identity pose."""
        return Pose()

    @property
    def transform(self) -> np.ndarray:
        """``W_H_P (4, 4)`` of this pose (the orientation is normalised)."""
        w, x, y, z = unit_quaternion(self.orientation)
        R = np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        )
        H = np.eye(4)
        H[:3, :3], H[:3, 3] = R, self.position
        return H

    @staticmethod
    def from_transform(H: np.ndarray) -> Pose:
        """The pose of a homogeneous transform ``(4, 4)`` (quaternion with ``w >= 0``)."""
        return Pose(np.asarray(H)[:3, 3], rotation_to_quaternion(np.asarray(H)[:3, :3]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pose):
            return NotImplemented
        return (self.position, self.orientation) == (other.position, other.orientation)

    def __repr__(self) -> str:
        return f"Pose(position={self.position}, orientation={self.orientation})"


def Pose_identity() -> Pose:
    """ScenarIO's module-level ``Pose_identity()``."""
    return Pose.identity()


def rotation_to_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit wxyz quaternion (``w >= 0``) of a rotation matrix ``(3, 3)`` (numpy)."""
    m = np.asarray(R, dtype=float)
    trace = np.trace(m)
    candidates = np.array(
        [
            [1 + trace, m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]],
            [m[2, 1] - m[1, 2], 1 + m[0, 0] - m[1, 1] - m[2, 2], m[0, 1] + m[1, 0], m[0, 2] + m[2, 0]],
            [m[0, 2] - m[2, 0], m[0, 1] + m[1, 0], 1 - m[0, 0] + m[1, 1] - m[2, 2], m[1, 2] + m[2, 1]],
            [m[1, 0] - m[0, 1], m[0, 2] + m[2, 0], m[1, 2] + m[2, 1], 1 - m[0, 0] - m[1, 1] + m[2, 2]],
        ]
    )
    q = candidates[int(np.argmax([trace, m[0, 0], m[1, 1], m[2, 2]]))]
    q = q / np.linalg.norm(q)
    return -q if q[0] < 0 else q


@dataclass
class PosePair:
    """Two poses (ScenarIO's ``PosePair``)."""

    first: Pose = field(default_factory=Pose)
    second: Pose = field(default_factory=Pose)


@dataclass
class PID:
    """PID gains and limits of a joint controller, with ScenarIO's (and ignition::math's) meaning:

    ``cmd = -p e - I - d de/dt + cmd_offset`` with ``e = current - reference`` and the integral
    ``I += i e dt`` clamped to ``[i_min, i_max]`` when ``i_max >= i_min``; the command is clamped
    to ``[cmd_min, cmd_max]`` when ``cmd_max >= cmd_min``. Unlimited by default.
    """

    p: float = 0.0
    i: float = 0.0
    d: float = 0.0
    i_min: float = -np.inf
    i_max: float = np.inf
    cmd_min: float = -np.inf
    cmd_max: float = np.inf
    cmd_offset: float = 0.0

    def __post_init__(self) -> None:
        for name in ("p", "i", "d", "i_min", "i_max", "cmd_min", "cmd_max", "cmd_offset"):
            value = float(getattr(self, name))
            if np.isnan(value):
                raise ValueError(f"PID.{name} must not be NaN")
            setattr(self, name, value)

    def as_array(self) -> np.ndarray:
        """``[p, i, d, i_min, i_max, cmd_min, cmd_max, cmd_offset]``."""
        return np.array([self.p, self.i, self.d, self.i_min, self.i_max, self.cmd_min, self.cmd_max, self.cmd_offset])

    @staticmethod
    def from_array(values: np.ndarray) -> PID:
        return PID(*[float(v) for v in values])


# ScenarIO's default joint PID (p, i, d) = (1, 0.1, 0.01), without limits.
DEFAULT_PID = PID(*DEFAULT_GAINS)


@dataclass
class Limit:
    """The ``min`` and ``max`` of one DoF."""

    min: float = -np.inf
    max: float = np.inf

    def __post_init__(self) -> None:
        self.min, self.max = float(self.min), float(self.max)


@dataclass
class JointLimit:
    """Per-DoF ``min`` and ``max`` tuples of a joint (or of several joints, serialised)."""

    min: tuple[float, ...] = ()
    max: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        self.min, self.max = as_tuple(self.min), as_tuple(self.max)
        if len(self.min) != len(self.max):
            raise ValueError(f"JointLimit min and max must have the same size, got {len(self.min)} and {len(self.max)}")


@dataclass
class ContactPoint:
    """A contact point: ``position`` [m] in the world, ``normal`` (from ``body_b`` into
    ``body_a``), ``force`` [N] on ``body_a`` (world axes), ``torque`` [N m] (zero: the contacts
    are point contacts, which transmit no torque about their point; ScenarIO reports the same)
    and penetration ``depth`` [m]; vectors are tuples of 3 floats."""

    depth: float = 0.0
    force: tuple[float, float, float] = (0.0, 0.0, 0.0)
    normal: tuple[float, float, float] = (0.0, 0.0, 0.0)
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    torque: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        self.depth = float(self.depth)
        for name in ("force", "normal", "position", "torque"):
            setattr(self, name, as_tuple(vector(getattr(self, name), 3, name)))


@dataclass
class Contact:
    """The contact between ``body_a`` and ``body_b`` (scoped ``model::link`` names) and its points
    (a tuple of :class:`ContactPoint`)."""

    body_a: str = ""
    body_b: str = ""
    points: tuple[ContactPoint, ...] = ()

    def __post_init__(self) -> None:
        self.points = tuple(self.points)


class JointType(enum.IntEnum):
    """Joint types; the values are ScenarIO's (continuous joints are ``revolute``)."""

    invalid = 0
    fixed = 1
    revolute = 2
    prismatic = 3
    ball = 4


class PhysicsEngine(enum.IntEnum):
    """The physics settings of a world.

    ``dart`` (ScenarIO's only engine) selects our default: the linearly implicit Euler step with
    soft contacts (``implicit_euler`` is the same); ``semi_implicit_euler`` the explicit step,
    ``rk4`` the fourth-order Runge-Kutta integrator.
    """

    dart = 0
    implicit_euler = 0
    rk4 = 1
    semi_implicit_euler = 2


INTEGRATOR_OF_ENGINE = {
    PhysicsEngine.dart: "implicit_euler",
    PhysicsEngine.rk4: "rk4",
    PhysicsEngine.semi_implicit_euler: "semi_implicit_euler",
}


class Verbosity(enum.IntEnum):
    """Log levels of :func:`~jaxsim_like.api.set_verbosity`."""

    suppress_all = 0
    error = 1
    warning = 2
    info = 3
    debug = 4


# ScenarIO's flat constants (``scenario.core.JointControlMode_position`` and friends).
JointControlMode_invalid = JointControlMode.invalid
JointControlMode_idle = JointControlMode.idle
JointControlMode_force = JointControlMode.force
JointControlMode_velocity = JointControlMode.velocity
JointControlMode_velocity_follower_dart = JointControlMode.velocity_follower_dart
JointControlMode_position = JointControlMode.position
JointControlMode_position_interpolated = JointControlMode.position_interpolated
JointType_invalid = JointType.invalid
JointType_fixed = JointType.fixed
JointType_revolute = JointType.revolute
JointType_prismatic = JointType.prismatic
JointType_ball = JointType.ball
PhysicsEngine_dart = PhysicsEngine.dart
PhysicsEngine_semi_implicit_euler = PhysicsEngine.semi_implicit_euler
PhysicsEngine_implicit_euler = PhysicsEngine.implicit_euler
PhysicsEngine_rk4 = PhysicsEngine.rk4
Verbosity_suppress_all = Verbosity.suppress_all
Verbosity_error = Verbosity.error
Verbosity_warning = Verbosity.warning
Verbosity_info = Verbosity.info
Verbosity_debug = Verbosity.debug

__all__ = [
    "DEFAULT_PID",
    "PID",
    "Contact",
    "ContactPoint",
    "JointControlMode",
    "JointControlMode_force",
    "JointControlMode_idle",
    "JointControlMode_invalid",
    "JointControlMode_position",
    "JointControlMode_position_interpolated",
    "JointControlMode_velocity",
    "JointControlMode_velocity_follower_dart",
    "JointLimit",
    "JointType",
    "JointType_ball",
    "JointType_fixed",
    "JointType_invalid",
    "JointType_prismatic",
    "JointType_revolute",
    "Limit",
    "PhysicsEngine",
    "PhysicsEngine_dart",
    "PhysicsEngine_rk4",
    "PhysicsEngine_semi_implicit_euler",
    "PhysicsEngine_implicit_euler",
    "Pose",
    "PosePair",
    "Pose_identity",
    "Verbosity",
    "Verbosity_debug",
    "Verbosity_error",
    "Verbosity_info",
    "Verbosity_suppress_all",
    "Verbosity_warning",
]
