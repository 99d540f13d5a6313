"""Recorded rollouts: arrays with names and metadata, saved to and loaded from ``.npz``.

:class:`Recording` holds what was kept of a run; :class:`RecordingWriter` streams the samples
of a long run to an ``.npz`` file chunk by chunk, so that writing costs the memory of one chunk.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import zipfile
from typing import Any, Mapping

import numpy as np

from .dynamics.model import Model
from .dynamics.state import State
from .simulation.model_step import StepOutput

_FORMAT = "jaxsim_like.recording/1"


@dataclasses.dataclass
class Recording:
    """A trajectory of ``T`` samples (optionally ``B`` worlds: arrays then lead with ``(B, T)``).

    ``time (T,)`` [s]; ``base_position (.., T, 3)``, ``base_quaternion (.., T, 4)`` wxyz,
    ``base_velocity (.., T, 6)`` in ``velocity_representation``, ``joint_positions`` and
    ``joint_velocities (.., T, n)``, ``joint_torques (.., T, n)`` applied, ``contact_forces
    (.., T, P, 3)`` world; names of joints and links, the link of each contact point, and free
    ``metadata`` (a JSON-serialisable dict). A field that was not kept is None.
    """

    time: np.ndarray
    base_position: np.ndarray | None
    base_quaternion: np.ndarray | None
    base_velocity: np.ndarray | None
    joint_positions: np.ndarray | None
    joint_velocities: np.ndarray | None
    joint_torques: np.ndarray | None
    contact_forces: np.ndarray | None
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

    @staticmethod
    def from_samples(
        model: Model, samples: Mapping[str, Any], dt: float, *, every: int = 1, velocity_representation: str = "mixed", **metadata: Any
    ) -> "Recording":
        """A recording of the ``samples`` a :class:`~jaxsim_like.monitor.Keep` kept (every
        ``every``-th step of ``dt`` [s]); fields a recording has but the samples lack are None."""
        arrays = {name: np.asarray(samples[name]) for name in SAMPLE_FIELDS if name in samples}
        if not arrays:
            raise ValueError(f"the samples hold none of the recorded fields {list(SAMPLE_FIELDS)}")
        first = next(iter(arrays))
        steps = arrays[first].shape[_time_axis(first, arrays[first].ndim)]
        return Recording(
            time=dt * every * np.arange(1, steps + 1),
            **{name: arrays.get(name) for name in SAMPLE_FIELDS},
            joint_names=tuple(model.joint_names),
            link_names=tuple(model.link_names),
            point_link=tuple(model.point_link),
            velocity_representation=velocity_representation,
            metadata={"model": model.name, "dt": float(dt), "every": int(every), **metadata},
        )

    def save(self, path: str | os.PathLike) -> None:
        """Write an ``.npz`` file (arrays, plus names and metadata as JSON)."""
        arrays = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if isinstance(getattr(self, f.name), np.ndarray)}
        header = _header(self.joint_names, self.link_names, self.point_link, self.velocity_representation, self.metadata)
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
            **{name: arrays.get(name) for name in SAMPLE_FIELDS},
            time=arrays["time"],
            joint_names=tuple(header["joint_names"]),
            link_names=tuple(header["link_names"]),
            point_link=tuple(header["point_link"]),
            velocity_representation=header["velocity_representation"],
            metadata=header["metadata"],
        )


SAMPLE_FIELDS = ("base_position", "base_quaternion", "base_velocity", "joint_positions", "joint_velocities", "joint_torques", "contact_forces")
"""The sampled fields of a :class:`Recording` (all but ``time``)."""


def _time_axis(name: str, ndim: int) -> int:
    """The sample axis of field ``name`` with ``ndim`` axes (0 unbatched, 1 batched)."""
    return ndim - (3 if name == "contact_forces" else 2)


def _header(joint_names, link_names, point_link, velocity_representation, metadata) -> dict[str, Any]:
    return {
        "format": _FORMAT,
        "joint_names": list(joint_names),
        "link_names": list(link_names),
        "point_link": [int(k) for k in point_link],
        "velocity_representation": velocity_representation,
        "metadata": metadata,
    }


class RecordingWriter:
    """Streams a batched recording of ``samples`` samples to the ``.npz`` file ``path``.

    ``shapes`` gives each kept field's shape per sample and world, e.g. ``{"joint_positions":
    (worlds, n)}``; :meth:`write` appends the next samples ``(worlds, S, ...)`` of every field
    to a raw ``.npy`` file in a temporary folder beside ``path``, and :meth:`close` packs them,
    1 MiB at a time, into the compressed ``.npz`` that :meth:`Recording.load` reads. Memory:
    one chunk. The folder is removed on close or on :meth:`abort`.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        model: Model,
        shapes: Mapping[str, tuple[int, ...]],
        samples: int,
        dt: float,
        *,
        every: int = 1,
        dtype: Any = np.float64,
        velocity_representation: str = "mixed",
        **metadata: Any,
    ) -> None:
        self.path = os.fspath(path)
        self.samples, self.written = samples, 0
        self.folder = tempfile.mkdtemp(prefix=".recording-", dir=os.path.dirname(os.path.abspath(self.path)))
        self.header = _header(
            model.joint_names, model.link_names, model.point_link, velocity_representation,
            {"model": model.name, "dt": float(dt), "every": int(every), **metadata},
        )
        self.time = dt * every * np.arange(1, samples + 1)
        self.fields = tuple(shapes)
        self.dtype = np.dtype(dtype)
        for name, shape in shapes.items():
            if name not in SAMPLE_FIELDS:
                self.abort()
                raise ValueError(f"a recording has no field {name!r}; it has {list(SAMPLE_FIELDS)}")
            full = (shape[0], samples, *shape[1:])
            np.lib.format.open_memmap(self._file(name), mode="w+", dtype=self.dtype, shape=full).flush()

    def _file(self, name: str) -> str:
        return os.path.join(self.folder, f"{name}.npy")

    def write(self, chunk: Mapping[str, Any]) -> None:
        """Append the next samples: every field of the writer, ``(worlds, S, ...)``, the same ``S``."""
        counts = {np.shape(chunk[name])[1] for name in self.fields}
        if len(counts) != 1:
            raise ValueError("every field of a chunk needs the same number of samples")
        (count,) = counts
        if self.written + count > self.samples:
            raise ValueError(f"{self.written + count} samples written to a recording of {self.samples}")
        for name in self.fields:
            target = np.lib.format.open_memmap(self._file(name), mode="r+")
            target[:, self.written : self.written + count] = np.asarray(chunk[name], self.dtype)
            target.flush()
            del target
        self.written += count

    def close(self) -> None:
        """Pack the fields into ``path`` (the samples not written stay zero) and remove the folder."""
        try:
            with zipfile.ZipFile(self.path, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
                with archive.open("header.npy", "w") as member:
                    np.lib.format.write_array(member, np.array(json.dumps(self.header)))
                with archive.open("time.npy", "w") as member:
                    np.lib.format.write_array(member, self.time)
                for name in self.fields:
                    with open(self._file(name), "rb") as source, archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                        shutil.copyfileobj(source, member, 1 << 20)
        finally:
            self.abort()

    def abort(self) -> None:
        """Remove the temporary folder (``path`` is not written)."""
        shutil.rmtree(self.folder, ignore_errors=True)
