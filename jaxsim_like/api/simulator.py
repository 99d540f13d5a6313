"""``Simulator``: ScenarIO's ``GazeboSimulator`` (step size, real-time factor, steps per run).

Runs are deterministic and synchronous: ``run()`` returns after ``steps_per_run`` physics steps
of every world that has physics (a paused run, or a world without physics, applies insertions,
removals and resets without stepping). A finite real-time factor paces the runs so that
simulated time advances ``rtf`` times as fast as wall time; ``rtf=float('inf')`` runs as fast
as possible. As in ScenarIO, failures return False and log the reason.

The step size is the constructor's ``step_size`` when given (ScenarIO writes it into the worlds'
physics profiles); without one, the ``<max_step_size>`` of the first inserted world file that
has a physics profile (a ``<physics>`` element, with or without the physics plugin), else 1 ms.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

from ..parsers import get_empty_world, parse_world
from ..parsers.description import WorldDescription
from ..parsers.sdf import parse_sdf_worlds
from . import errors
from .calls import scenario_methods
from .physics import physics_plugins, physics_step_sizes
from .utils import log
from .world import World


DEFAULT_STEP_SIZE = 0.001
"""[s]: the step size of a simulator created without one, whose world files set none."""


@scenario_methods
class Simulator:
    """A simulator of one or more worlds (``Simulator(step_size=0.001, rtf=1.0, steps_per_run=1)``;
    without ``step_size``, the step size of the first world file that sets one, else 0.001 s)."""

    def __init__(self, step_size: float = DEFAULT_STEP_SIZE, rtf: float = 1.0, steps_per_run: int = 1) -> None:
        self._step_size = float(step_size)
        # The default object itself (not an equal value) means "not given": a world file may set it.
        self._step_size_from_file = step_size is DEFAULT_STEP_SIZE
        self._rtf = float(rtf)
        self._steps_per_run = int(steps_per_run)
        self._descriptions: list[tuple[WorldDescription, bool]] = []  # and whether it has a physics plugin
        self._worlds: dict[str, World] = {}
        self._initialized = False
        self._closed = False
        self._deadline: float | None = None

    def step_size(self) -> float:
        """The physics step [s] (the constructor's, or that of the first world file that sets one)."""
        return self._step_size

    def real_time_factor(self) -> float:
        """The desired real-time factor (``inf``: as fast as possible)."""
        return self._rtf

    def steps_per_run(self) -> int:
        """The physics steps of every unpaused run."""
        return self._steps_per_run

    def initialize(self) -> bool:
        """Create the worlds (the empty world ``default``, without physics, if none was inserted).

        False (and a logged error) for a non-positive step size, real-time factor or steps per
        run, or after :meth:`close`.
        """
        if self._closed:
            raise errors.SimulatorError("the simulator was closed")
        if self._initialized:
            return True
        problems = [
            f"{name} must be positive, got {value}"
            for name, value in (("step_size", self._step_size), ("rtf", self._rtf), ("steps_per_run", self._steps_per_run))
            if not value > 0
        ]
        if problems:
            raise errors.SimulatorError("cannot initialize: " + "; ".join(problems))
        if not self._descriptions:
            self._descriptions.append((parse_world(get_empty_world()), False))
        for description, physics in self._descriptions:
            self._worlds[description.name] = World(self, description.name, description.gravity, description.models, physics)
        self._initialized = True
        log.info("simulator initialized with worlds %s", list(self._worlds))
        return True

    def initialized(self) -> bool:
        return self._initialized

    def run(self, paused: bool = False) -> bool:
        """One run: ``steps_per_run`` physics steps of every world with physics, or a paused run (no
        step). False before :meth:`initialize` or after :meth:`close`."""
        if not self._initialized or self._closed:
            raise errors.SimulatorError("the simulator was closed" if self._closed else "call initialize() first")
        start = time.perf_counter()
        steps = 0 if paused else self._steps_per_run
        for world in self._worlds.values():
            world._run(steps)
        if steps and math.isfinite(self._rtf):
            base = start if self._deadline is None else max(self._deadline, start)
            self._deadline = base + steps * self._step_size / self._rtf
            delay = self._deadline - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        return True

    def pause(self) -> bool:
        """Runs are synchronous, so the simulator is always paused between them: True."""
        return True

    def running(self) -> bool:
        """False: runs are synchronous (ScenarIO's non-deterministic mode does not exist here)."""
        return False

    def close(self) -> bool:
        """Release the worlds; the simulator cannot be used afterwards."""
        for world in self._worlds.values():
            world._close()
        self._worlds.clear()
        self._closed = True
        return True

    def gui(self, verbosity: int = -1) -> bool:
        """Write the 3D view (:mod:`jaxsim_like.viewer`) of the first world's models as they are now
        to ``$JAXSIM_LIKE_GUI_FILE`` (default ``<temp dir>/jaxsim_like_<world>.html``) and open it in
        the web browser; without a display, print where the file is. A still picture: call it
        again for a later state. False before :meth:`initialize`; ``verbosity`` is unused."""
        if not self._initialized or self._closed:
            raise errors.SimulatorError("the simulator was closed" if self._closed else "call initialize() first")
        from .view import show

        show(next(iter(self._worlds.values())))
        return True

    def insert_world_from_sdf(self, world_file: str | os.PathLike = "", world_name: str = "") -> bool:
        """Load the first world of an SDF file (the empty world, without physics, when
        ``world_file`` is empty), renamed ``world_name`` if given; the world has physics if its
        file holds a physics plugin (see :mod:`.physics`), else :meth:`World.set_physics_engine`
        loads it. Only before :meth:`initialize`; False for a missing or invalid file or a
        world name already inserted."""
        self._check_not_initialized()
        source = os.fspath(world_file)
        if not source:
            self._add(parse_world(get_empty_world()), world_name, False)
            return True
        self._add(parse_world(source), world_name, physics_plugins(source)[0], physics_step_sizes(source)[0])
        return True

    def insert_worlds_from_sdf(self, world_file: str | os.PathLike, world_names: Any = ()) -> bool:
        """Load every world of an SDF file, renamed ``world_names`` if given (as
        :meth:`insert_world_from_sdf`). False for a number of names that differs from the number
        of worlds, or a duplicate name."""
        self._check_not_initialized()
        source = os.fspath(world_file)
        descriptions = parse_sdf_worlds(source)
        names = list(world_names)
        if names and len(names) != len(descriptions):
            raise errors.SimulatorError(f"{len(names)} world names given for {len(descriptions)} worlds in '{world_file}'")
        renamed = [name or description.name for name, description in zip(names or [""] * len(descriptions), descriptions)]
        taken = {d.name for d, _ in self._descriptions}
        if len(set(renamed)) != len(renamed) or taken & set(renamed):
            raise errors.WorldError(f"duplicate world names among {renamed} (already inserted: {sorted(taken)})")
        for description, name, physics, step in zip(descriptions, renamed, physics_plugins(source), physics_step_sizes(source)):
            self._add(description, name, physics, step)
        return True

    def world_names(self) -> tuple[str, ...]:
        return tuple(self._worlds) if self._initialized else tuple(d.name for d, _ in self._descriptions)

    def get_world(self, world_name: str = "") -> World | None:
        """The world called ``world_name`` (the first one when empty); None, with a logged error,
        before :meth:`initialize` or for an unknown name."""
        if not self._initialized:
            log.error("Simulator.get_world: the simulator is not initialized; call initialize() first")
            return None
        if not world_name:
            return next(iter(self._worlds.values()))
        world = self._worlds.get(world_name)
        if world is None:
            log.error("Simulator.get_world: no world '%s'; the worlds are %s", world_name, list(self._worlds))
        return world

    def _check_not_initialized(self) -> None:
        if self._initialized or self._closed:
            raise errors.SimulatorError("worlds can only be inserted before initialize()")

    def _add(self, description: WorldDescription, name: str, physics: bool, step_size: float | None = None) -> None:
        name = name or description.name
        if name in {d.name for d, _ in self._descriptions}:
            raise errors.WorldError("a world with this name was already inserted", name)
        description.name = name
        self._descriptions.append((description, physics))
        if step_size is None:
            return
        if self._step_size_from_file:
            self._step_size, self._step_size_from_file = step_size, False
            log.info("world '%s': the step size is its file's max_step_size, %g s", name, step_size)
        elif step_size != self._step_size:
            log.info("world '%s': its file's max_step_size %g s is ignored, the simulator steps %g s", name, step_size, self._step_size)

    def __repr__(self) -> str:
        return f"Simulator(step_size={self._step_size}, rtf={self._rtf}, steps_per_run={self._steps_per_run}, worlds={self.world_names()})"
