"""Recorded rollouts: arrays with names and metadata, saved to and loaded from ``.npz``."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import numpy as np

from .dynamics.model import Model
from .dynamics.state import State
from .simulation.step import StepOutput

_FORMAT = "jaxsim_like.recording/1"


@dataclasses.dataclass
class Recording:
    """A trajectory of ``T`` samples (optionally ``B`` worlds: arrays then lead with ``(B, T)``).

    ``time (T,)`` [s]; ``base_position (.., T, 3)``, ``base_quaternion (.., T, 4)`` wxyz,
    ``base_velocity (.., T, 6)`` in ``velocity_representation``, ``joint_positions`` and
    ``joint_velocities (.., T, n)``, ``joint_torques (.., T, n)`` applied, ``contact_forces
    (.., T, P, 3)`` world; names of joints and links, the link of each contact point, and free
    ``metadata`` (a JSON-serialisable dict).
    """

    time: np.ndarray
    base_position: np.ndarray
    base_quaternion: np.ndarray
    base_velocity: np.ndarray
    joint_positions: np.ndarray
    joint_velocities: np.ndarray
    joint_torques: np.ndarray
    contact_forces: np.ndarray
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]
    point_link: tuple[int, ...]
    velocity_representation: str = "mixed"
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)

    @staticmethod
    def from_rollout(model: Model, states: State, outputs: StepOutput, dt: float, **metadata: Any) -> "Recording":
        """A recording of the stacked ``states`` and ``outputs`` of :func:`jaxsim_like.rollout`."""
        steps = np.asarray(states.joint_positions).shape[-2]
        return Recording(
            time=dt * np.arange(1, steps + 1),
            base_position=np.asarray(states.base_position),
            base_quaternion=np.asarray(states.base_quaternion),
            base_velocity=np.asarray(states.base_velocity),
            joint_positions=np.asarray(states.joint_positions),
            joint_velocities=np.asarray(states.joint_velocities),
            joint_torques=np.asarray(outputs.joint_torques),
            contact_forces=np.asarray(outputs.contact_forces),
            joint_names=tuple(model.joint_names),
            link_names=tuple(model.link_names),
            point_link=tuple(model.point_link),
            velocity_representation=states.velocity_representation,
            metadata={"model": model.name, "dt": float(dt), **metadata},
        )

    def save(self, path: str | os.PathLike) -> None:
        """Write an ``.npz`` file (arrays, plus names and metadata as JSON)."""
        arrays = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if isinstance(getattr(self, f.name), np.ndarray)}
        header = {
            "format": _FORMAT,
            "joint_names": list(self.joint_names),
            "link_names": list(self.link_names),
            "point_link": list(self.point_link),
            "velocity_representation": self.velocity_representation,
            "metadata": self.metadata,
        }
        np.savez_compressed(path, header=np.array(json.dumps(header)), **arrays)

    @staticmethod
    def load(path: str | os.PathLike) -> "Recording":
        """Read a file written by :meth:`save`; ValueError for any other file."""
        with np.load(path, allow_pickle=False) as data:
            if "header" not in data:
                raise ValueError(f"{os.fspath(path)}: not a jaxsim_like recording (no header)")
            header = json.loads(str(data["header"]))
            if header.get("format") != _FORMAT:
                raise ValueError(f"{os.fspath(path)}: unsupported recording format {header.get('format')!r}")
            arrays = {name: data[name] for name in data.files if name != "header"}
        return Recording(
            **arrays,
            joint_names=tuple(header["joint_names"]),
            link_names=tuple(header["link_names"]),
            point_link=tuple(header["point_link"]),
            velocity_representation=header["velocity_representation"],
            metadata=header["metadata"],
        )
