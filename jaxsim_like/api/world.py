"""``World``: the models of one simulated world, their physics settings, gravity and plugins.

As in ScenarIO, an inserted model is listed and readable at once, while removals and resets
are applied by the next run of the simulator (paused or not). A world has no physics until
``set_physics_engine`` is called, unless its file holds a physics plugin (see :mod:`.physics`):
until then runs step nothing and the time does not flow. The moving models are stepped together
by :func:`jaxsim_like.simulation.world.world_step` against the world's terrain (see
:mod:`.scenery`) and against each other (its collision table, self-collisions included).
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.model import Model, build_model
from ..loading import ContactSampling
from ..parsers import find_sdf_file, parse_model, parse_srdf
from ..parsers.description import ModelDescription
from ..parsers.xml import looks_like_xml
from ..simulation import ContactParams, ModelParams, SimulationParams, WorldParams
from ..simulation.collision.collisions import Collisions
from ..simulation.collision.table import pair_budgets
from ..simulation.world import WorldModel
from ..simulation.scenery import boxes_model, without_boxes
from ..simulation.terrain import box_penetration
from . import engine, errors, scenery
from .calls import scenario_methods
from .entry import ModelEntry
from .types import INTEGRATOR_OF_ENGINE, ContactPoint, PhysicsEngine, Pose, as_tuple, unit_quaternion, vector
from .utils import log

if TYPE_CHECKING:
    from .model import Model
    from .simulator import Simulator


def entity_id(scoped_name: str) -> int:
    """A stable non-zero id of a scoped name (ScenarIO hashes scoped names too)."""
    return zlib.crc32(scoped_name.encode()) or 1


def as_pose(pose: Any) -> Pose:
    """A :class:`Pose` from a Pose, a ``(position, orientation)`` pair or a ``(4, 4)`` transform."""
    if isinstance(pose, Pose):
        return pose
    array = np.asarray(pose, dtype=object)
    if array.shape == (4, 4):
        return Pose.from_transform(np.asarray(pose, dtype=float))
    if len(pose) == 2:
        return Pose(*pose)
    raise ValueError(f"pose must be a Pose, a (position, orientation) pair or a 4x4 transform, got {pose!r}")


FIRM_DAMPING_RATIO = 20.0
"""The damping ratio of the object API's default contact law. Gazebo's rigid contacts stop a body
at touchdown and carry its weight within a few steps; a critically damped soft law (the functional
core's default) rebounds from the impact's extra depth and settles over its period. Overdamped, a body stops at touchdown and creeps to its resting depth, so
its contact forces sum to its weight within a few steps (the cube of ``test_gazebo_behaviour``).
Only for models of one link (objects): on the light links of an articulated robot a damping this
large makes it move at rest (measured in docs/changelog.md), so robots keep the critically damped
law."""


def _damping_ratio(model: Any, requested: float | None) -> float:
    """The damping ratio of ``model``'s default contact law: ``requested``, or by default
    ``FIRM_DAMPING_RATIO`` for a model of one link and 1 for the others."""
    if requested is not None:
        return requested
    return FIRM_DAMPING_RATIO if model.number_of_links == 1 else 1.0


@scenario_methods
class World:
    """A simulated world (ScenarIO's ``scenario.gazebo.World``), created by the :class:`Simulator`."""

    def __init__(
        self, simulator: Simulator, name: str, gravity: Any, models: list[ModelDescription] = (), physics: bool = False
    ) -> None:
        self._simulator = simulator
        self._name = name
        self._gravity = vector(gravity, 3, "gravity")
        self._device_gravity = jax.device_put(self._gravity)  # a numpy argument is copied at every run
        self._dtype = jnp.zeros(()).dtype
        self._entries: dict[str, ModelEntry] = {}
        self._removals: list[str] = []
        self._step_count = 0
        self._physics = bool(physics)
        self._integrator = "implicit_euler"
        self._contact: dict[str, Any] = {"contact": None, "max_penetration": 0.001, "friction": None, "damping_ratio": None}
        self._plugins: list[tuple[Callable, Any]] = []
        self._terrain = None
        self._walls: tuple[Model, ModelParams] | None = None
        self._terrain_names: list[str] = [""]
        self._terrain_dirty = True
        self._collisions: Collisions | None = None
        self._collision_key: tuple | None = None
        self._pair_deformation: jax.Array | None = None
        self._pair_load: jax.Array | None = None
        self._wall_load: jax.Array | None = None
        self._device_step_size = jnp.asarray(float(simulator.step_size()))  # the dt of every WorldParams built here
        self._pairs: tuple[Any, tuple[ModelEntry, ...]] | None = None
        self._pair_budget: int | dict[str, int] | None = None
        self._touching_budget: int | None = None
        self._overflowed: set[str] = set()  # the pair kinds whose overflow was reported (and "touching")
        self._valid = True
        for description in models:
            self._add(description, description.name, None)
        self._refresh()

    # ----- ScenarIO's World ------------------------------------------------------------

    def id(self) -> int:
        """A unique non-zero id (a hash of the world name)."""
        return entity_id(self._name)

    def entity(self) -> int:
        """The id of this world (there is no Gazebo entity)."""
        return self.id()

    def valid(self) -> bool:
        """Whether the world still exists (False after the simulator is closed)."""
        return self._valid

    def to_gazebo(self) -> World:
        """ScenarIO's cast to the Gazebo class: this world itself."""
        return self

    def time(self) -> float:
        """The simulated time [s]: physics steps done times the step size (it does not flow
        without physics)."""
        return self._step_count * self._simulator.step_size()

    def name(self) -> str:
        return self._name

    def _physics_steps(self, duration: float) -> int:
        """The physics steps that cover ``duration >= 0`` [s] (at least one) at the simulator's
        step size."""
        if not duration >= 0 or not math.isfinite(duration):
            raise ValueError(f"duration must be a finite non-negative number of seconds, got {duration}")
        return max(1, math.ceil(duration / self._simulator.step_size() - 1e-9))

    def gravity(self) -> tuple[float, float, float]:
        """The gravity vector [m/s^2]."""
        return as_tuple(self._gravity)

    def set_gravity(self, gravity: Any) -> bool:
        """Set the gravity ``(3,)`` [m/s^2] used from the next run (any time; no recompilation)."""
        self._gravity = vector(gravity, 3, "gravity")
        self._device_gravity = jax.device_put(self._gravity)
        self._clear_caches()
        return True

    def model_names(self) -> tuple[str, ...]:
        """The names of the models of the world (a removed model is listed until the next run)."""
        return tuple(self._entries)

    def get_model(self, model_name: str) -> Model | None:
        """The model called ``model_name``; None, with a logged error, if there is none."""
        from .model import Model

        entry = self._entries.get(model_name)
        if entry is None:
            log.error("World.get_model: %s", errors.ModelNotFound(model_name, self._models_hint()))
            return None
        return Model(self, entry)

    def models(self, model_names: Any = ()) -> tuple[Model, ...]:
        """The models called ``model_names`` (all when empty), in that order; ModelNotFound for
        an unknown name."""
        from .model import Model

        return tuple(Model(self, self._entry(name)) for name in (list(model_names) or self.model_names()))

    def insert_model(self, model_file: str | os.PathLike, pose: Any = None, override_model_name: str = "", *, srdf: Any = None) -> bool:
        """Insert a model from a URDF or SDF file (or XML string); see :meth:`insert_model_from_file`."""
        if looks_like_xml(model_file):
            return self.insert_model_from_string(model_file, pose, override_model_name, srdf=srdf)
        return self.insert_model_from_file(model_file, pose, override_model_name, srdf=srdf)

    def insert_model_from_file(self, path: str | os.PathLike, pose: Any = None, override_model_name: str = "", *, srdf: Any = None) -> bool:
        """Insert the model of a URDF or SDF file (a path, a ``model://`` URI, or a file or model
        folder on GZ_SIM_RESOURCE_PATH) at ``pose`` (the model frame in the world; default: the pose
        in the description, else the identity), named ``override_model_name`` (default: the
        description's name). ``srdf`` (path or string) attaches a semantic description.

        The model is listed and readable at once. False, with a logged error, for a name already
        in the world, a missing file or an invalid description.
        """
        source = os.fspath(path)
        if not source.strip():
            raise FileNotFoundError("empty model file name")
        if not os.path.isfile(source):
            source = find_sdf_file(source)  # model:// URIs and names on GZ_SIM_RESOURCE_PATH
        return self._insert(source, pose, override_model_name, srdf)

    def insert_model_from_string(self, sdf_string: str, pose: Any = None, override_model_name: str = "", *, srdf: Any = None) -> bool:
        """Insert the model of a URDF or SDF XML string; see :meth:`insert_model_from_file`."""
        return self._insert(sdf_string, pose, override_model_name, srdf)

    def remove_model(self, model_name: str) -> bool:
        """Remove a model at the next run (paused or not); False if there is none."""
        if model_name not in self._entries:
            raise errors.WorldError(str(errors.ModelNotFound(model_name, self._models_hint())), self._name)
        if model_name not in self._removals:
            self._removals.append(model_name)
        return True

    def set_physics_engine(
        self,
        engine: int = PhysicsEngine.dart,
        *,
        contact: ContactParams | None = None,
        max_penetration: float = 0.001,
        friction: float | None = None,
        damping_ratio: float | None = None,
        pair_budget: int | dict[str, int] | None = None,
        touching_budget: int | None = None,
    ) -> bool:
        """Load the physics (ScenarIO: "By default, if the world file does not already contain a
        physics plugin, no physics is loaded by default"): from the next run, runs step the
        models and the time flows. ``PhysicsEngine.dart`` (or ``implicit_euler``, the linearly
        implicit step), ``semi_implicit_euler`` (explicit) and ``rk4`` select the integrator; ``contact`` gives the soft-contact parameters of every
        model, else each model gets :meth:`ContactParams.from_mass` of its mass sinking
        ``max_penetration`` [m] at rest, with Coulomb ``friction`` (None: 0.5, or the friction
        the model's file gives its collisions, see :meth:`SimulationParams.build`) and the bounce's
        ``damping_ratio`` (None: ``FIRM_DAMPING_RATIO`` for a model of one link, critically damped
        for the others; see its docstring). ``pair_budget``: the most candidate pairs of links
        tested per step, for every pair kind or per kind (``{"box-box": 64}``; None: sized from
        the scene, :func:`~jaxsim_like.simulation.collision.table.scene_budget`); a run whose
        touching candidates exceed a kind's budget logs a warning naming the kind, once per kind.
        ``touching_budget``: the most touching contact slots between links that a step of the
        implicit integrator solves (None: :data:`~jaxsim_like.simulation.world.TOUCHING_PER_LINK`
        per link, see :meth:`~jaxsim_like.simulation.world.WorldModel.build`); a run that touches
        at more slots logs a warning, once. Calling it again changes the settings. False for an unknown engine."""
        try:
            integrator = INTEGRATOR_OF_ENGINE[PhysicsEngine(int(engine))]
        except ValueError:
            raise errors.WorldError(f"unknown physics engine {engine!r}; expected one of {[e.name for e in PhysicsEngine]}", self._name) from None
        try:
            pair_budgets(pair_budget)
        except ValueError as error:
            raise errors.WorldError(f"pair_budget: {error}", self._name) from None
        if touching_budget is not None and not (isinstance(touching_budget, (int, np.integer)) and touching_budget >= 1):
            raise errors.WorldError(f"touching_budget must be an integer >= 1, got {touching_budget!r}", self._name)
        self._physics = True
        self._touching_budget = touching_budget
        self._integrator = integrator
        self._pair_budget = pair_budget
        self._contact = {
            "contact": contact, "max_penetration": float(max_penetration), "friction": None if friction is None else float(friction), "damping_ratio": None if damping_ratio is None else float(damping_ratio),
        }
        for entry in self._entries.values():
            self._rebuild_params(entry)
        self._walls = None
        return True

    def insert_world_plugin(self, lib_name: Any, class_name: str = "", context: str = "") -> bool:
        """Add a plugin: a Python callable ``plugin(world)`` run before every physics step.

        Gazebo plugins from shared libraries raise NotImplementedError.
        """
        return self._insert_plugin(lib_name, class_name, context)

    # ----- internals used by the handles and the simulator --------------------------------

    def _insert_plugin(self, plugin: Any, class_name: str = "", context: str = "", handle: Any = None) -> bool:
        if not callable(plugin):
            raise errors.NotImplementedError(
                f"Gazebo plugin '{plugin}' ({class_name or 'no class'})",
                "shared-library plugins need Gazebo; pass a Python callable, called with the handle before every physics step",
            )
        if handle is None:
            self._plugins.append((plugin, self))
        else:
            self._entry(handle._model_name, handle._generation).plugins.append((plugin, handle))
        return True

    def _entry(self, model_name: str, generation: int | None = None) -> ModelEntry:
        entry = self._entries.get(model_name)
        if entry is None or (generation is not None and entry.generation != generation):
            raise errors.ModelNotFound(model_name, self._models_hint())
        return entry

    def _models_hint(self) -> str:
        return f"the models of world '{self._name}' are {list(self._entries)}"

    def _params(self, model) -> ModelParams:
        """The parameters of a dynamic model in this world (the world's own settings live in
        :meth:`_world_model`; self-collisions in its collision table)."""
        return SimulationParams.build(
            model,
            dt=self._simulator.step_size(),
            integrator=self._integrator,
            gravity=self._gravity,
            contact=self._contact["contact"],
            max_penetration=self._contact["max_penetration"],
            friction=self._contact["friction"],
            damping_ratio=_damping_ratio(model, self._contact["damping_ratio"]),
            terrain=without_boxes(self._terrain_now()),
        ).model

    def _rebuild_params(self, entry: ModelEntry) -> None:
        """Rebuild the simulation parameters of a dynamic model."""
        if not entry.static:
            entry.set_params(self._params(entry.model))

    def _add(self, description: ModelDescription, name: str, srdf: Any) -> ModelEntry:
        model = build_model(
            description, floating_base=False if description.static else None, collidable_points=ContactSampling().points,
            ellipsoids=ContactSampling().exact_ellipsoids,
        )
        semantics = parse_srdf(srdf, description) if srdf is not None else None
        params = None if description.static else self._params(model)
        entry = ModelEntry(name, description, model, params, semantics, self._step_count)
        self._entries[name] = entry
        if entry.static:
            self._terrain_dirty = True
        log.info("world '%s': inserted model '%s' (%s)", self._name, name, model)
        return entry

    def _insert(self, source: str, pose: Any, override_model_name: str, srdf: Any) -> bool:
        description = parse_model(source)
        name = override_model_name or description.name
        if name in self._entries:
            raise errors.ModelError(f"a model with this name is already in world '{self._name}'", name)
        pose = None if pose is None else as_pose(pose)
        if pose is not None:
            description = description.replace(W_H_M=pose.transform)
        entry = self._add(description, name, srdf)
        if pose is not None and np.array_equal(description.M_H_root, np.eye(4)):
            # The base link is the model frame: its pose is the one given, read back as given.
            entry.pending["base_position"] = np.asarray(pose.position)
            entry.pending["base_quaternion"] = unit_quaternion(pose.orientation)
            entry.apply_resets()
        self._refresh()
        return True

    def _terrain_now(self):
        """The terrain of the static models: the ground, and their boxes (which the world's step
        meets as the shapes of one more model, :meth:`_world_model`)."""
        if self._terrain_dirty or self._terrain is None:
            statics = [
                (e.name, e.description, e.model, _base_transform(e)) for e in self._entries.values() if e.static
            ]
            self._terrain, self._terrain_names = scenery.static_terrain(statics, self._dtype)
            self._walls = None
            self._terrain_dirty = False
        return self._terrain

    def _walls_now(self, terrain) -> tuple[Model, ModelParams] | None:
        """The model of the static boxes of ``terrain`` (:func:`~jaxsim_like.simulation.scenery.boxes_model`)
        and its parameters, built again where the static models or the
        physics settings change; None without boxes."""
        if terrain.box_transforms.shape[0] == 0:
            return None
        if self._walls is None:
            walls = boxes_model(terrain)
            self._walls = (walls, self._params(walls))
        return self._walls

    def _clear_caches(self) -> None:
        for entry in self._entries.values():
            entry.cache.pop("observation", None)

    def _refresh(self) -> None:
        """After a change of structure: compute every observation now, so getters never compile."""
        for entry in self._entries.values():
            entry.observation()

    def _observation(self, entry: ModelEntry) -> engine.Observation:
        return entry.observation()

    def _box_names(self, positions: np.ndarray) -> list[str]:
        """The scoped name of the static link whose box is deepest at each of ``positions (K, 3)``
        [m] (contacts with the model of the static boxes), in one query."""
        if len(positions) == 0:
            return []
        depth, _ = box_penetration(self._terrain_now(), jnp.asarray(positions, self._dtype))
        return [self._terrain_names[1 + int(box)] for box in np.argmax(np.asarray(depth), axis=1)]

    def _link_pair_contacts(self, entry: ModelEntry, link: int) -> list[tuple[str, ContactPoint]]:
        """``(other body's scoped name, point)`` of the last step's contacts between link ``link``
        of ``entry`` and other links, the normal pointing into this link, the force on it."""
        if self._pairs is None or entry not in self._pairs[1]:
            return []
        packed, entries = self._pairs
        if not isinstance(packed, np.ndarray):
            packed = np.asarray(packed)
            self._pairs = (packed, entries)
        offsets = np.cumsum([0] + [e.model.number_of_links for e in entries])
        owner = {id(e): k for k, e in enumerate(entries)}
        this = offsets[owner[id(entry)]] + link
        rows = packed[(packed[:, engine.PAIR_ACTIVE] > 0.5) & ((packed[:, engine.LINK_A] == this) | (packed[:, engine.LINK_B] == this))]
        walled = np.maximum(rows[:, engine.LINK_A], rows[:, engine.LINK_B]) >= offsets[-1]  # with the static models' boxes
        boxes = iter(self._box_names(rows[walled][:, engine.PAIR_POSITION]))
        found = []
        for row, wall in zip(rows, walled):
            a, b = int(row[engine.LINK_A]), int(row[engine.LINK_B])
            sign, other = (1.0, b) if a == this else (-1.0, a)
            if wall:
                name = next(boxes)
            else:
                k = int(np.searchsorted(offsets, other, side="right") - 1)
                name = f"{entries[k].name}::{entries[k].model.link_names[other - offsets[k]]}"
            point = ContactPoint(
                depth=float(row[engine.PAIR_DEPTH]),
                force=sign * row[engine.PAIR_FORCE],
                normal=sign * row[engine.PAIR_NORMAL],
                position=row[engine.PAIR_POSITION],
            )
            found.append((name, point))
        return found

    def _world_model(self, dynamic: list[ModelEntry], terrain) -> WorldModel:
        """The functional world of the dynamic models: its collision table (the links of
        different models, and those of a model with self-collisions, SRDF pairs respected) is
        built once per set of models, self-collision switches and SRDFs."""
        walls = self._walls_now(terrain)
        extra, extra_params = ([], []) if walls is None else ([walls[0]], [walls[1]])
        key = (tuple((entry.generation, entry.self_collision, id(entry.srdf)) for entry in dynamic), repr(self._pair_budget),
               None if walls is None else len(walls[0].shape_kind))
        if self._collision_key != key:
            self._collisions = Collisions.build(
                [entry.model for entry in dynamic] + extra,
                self_collision=[entry.self_collision for entry in dynamic] + [False] * len(extra),
                srdf=[entry.srdf for entry in dynamic] + [None] * len(extra),
                budget=self._pair_budget,
            )
            self._collision_key = key
            self._pair_deformation = self._pair_load = self._wall_load = None
            self._overflowed = set()
        settings = WorldParams(
            dt=self._device_step_size, gravity=self._device_gravity, terrain=without_boxes(terrain), integrator=self._integrator
        )
        world = WorldModel.assemble(
            [entry.model for entry in dynamic] + extra,
            [entry.params for entry in dynamic] + extra_params,
            settings,
            self._collisions,
            exact_velocity=[entry.features.exact_velocity for entry in dynamic] + [False] * len(extra),
        ).replace(scenery=len(extra))
        if self._touching_budget is None or world.collision is None:
            return world
        return world.replace(touching=min(int(self._touching_budget), world.collision.size))

    def _plugins_to_run(self) -> list[tuple[Callable, Any]]:
        return self._plugins + [plugin for entry in self._entries.values() for plugin in entry.plugins]

    def _run(self, steps: int) -> None:
        """One simulator run of ``steps`` physics steps (0: paused; always 0 without physics). A
        paused run applies removals and resets on the host; the PID resets wait for the next
        physics step."""
        steps = steps if self._physics else 0
        plugins = self._plugins_to_run()
        if steps and plugins:
            for _ in range(steps):
                for plugin, handle in plugins:
                    plugin(handle)
                self._advance(1)
        else:
            self._advance(steps)

    def _advance(self, steps: int) -> None:
        changed = bool(self._removals)
        for name in self._removals:
            self._terrain_dirty |= self._entries.pop(name).static
        self._removals = []
        for entry in self._entries.values():
            if entry.static and entry.apply_resets():
                self._terrain_dirty = True
        changed |= self._terrain_dirty
        terrain = self._terrain_now()
        dynamic = [entry for entry in self._entries.values() if not entry.static]
        for entry in dynamic:
            entry.apply_resets()
        if dynamic and steps:
            for entry in dynamic:
                entry.cache.clear()  # no numpy view may hold a buffer that the run donates
            world = self._world_model(dynamic, terrain)
            if self._pair_deformation is None:
                self._pair_deformation = world.pair_deformation_zeros(dynamic[0].sim.dtype)
                self._pair_load = world.pair_load_zeros(dynamic[0].sim.dtype)
                self._wall_load = world.pair_load_zeros(dynamic[0].sim.dtype)
            sims, pairs, self._pair_deformation, self._pair_load, self._wall_load, overflow = engine.run_world(
                world,
                tuple(entry.inputs() for entry in dynamic),
                tuple(entry.sim for entry in dynamic),
                self._pair_deformation,
                self._pair_load,
                self._wall_load,
                steps,
                features=tuple(entry.features for entry in dynamic),
                layouts=tuple(entry.layout for entry in dynamic),
            )
            for entry, sim in zip(dynamic, sims):
                entry.finish_run(sim, steps)
            self._pairs = (pairs, tuple(dynamic))
            self._report_overflow(world, np.asarray(overflow))
        self._step_count += steps
        if changed:
            self._refresh()

    def _report_overflow(self, world: WorldModel, overflow: np.ndarray) -> None:
        """Log a warning, once per pair kind, for the kinds whose budget could not hold all
        their overlapping candidate pairs in some step of the last run (``overflow (K,)`` per
        pair group of the world's table, then the touching slots that the touching budget could
        not hold)."""
        groups = world.collision.groups if world.collision else ()
        if len(overflow) > len(groups) and overflow[len(groups)] > 0 and "touching" not in self._overflowed:
            self._overflowed.add("touching")
            log.warning(
                "[%s] the touching budget (%d contact slots between links a step) left %d touching slots without force in a "
                "step: raise it with set_physics_engine(touching_budget=%d)",
                self._name, world.touching, int(overflow[len(groups)]), world.touching + int(overflow[len(groups)]),
            )
        for group, spilled in zip(groups, overflow):
            if spilled > 0 and group.kind not in self._overflowed:
                self._overflowed.add(group.kind)
                log.warning(
                    "[%s] the pair budget of %s contacts (%d candidate pairs a step) left %d overlapping pairs "
                    "untested in a step: contacts may be missed; raise it with set_physics_engine(pair_budget={%r: %d})",
                    self._name, group.kind, group.keep, int(spilled), group.kind, group.keep + int(spilled),
                )

    def _close(self) -> None:
        self._valid = False
        self._entries.clear()

    def __repr__(self) -> str:
        return f"World({self._name!r}, models={self.model_names()}, time={self.time():g})"


def _base_transform(entry: ModelEntry) -> np.ndarray:
    return Pose(entry.state("base_position"), entry.state("base_quaternion")).transform
