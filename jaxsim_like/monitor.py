"""What a long run keeps: running statistics of every step, and optional decimated samples.

A rollout that stacks every state and output costs memory in proportion to its duration (the
per-point contact outputs dominate: 30 s of the iCub stacked 13 GB). :func:`monitored_rollout`
keeps instead a :class:`Summary` updated at every step (the first non-finite step, the deepest
penetration, the last total contact force) and, when asked with a :class:`Keep`, the chosen
fields of every ``every``-th step, so that its memory is that of what it keeps.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .dynamics.model import Model
from .dynamics.state import State
from .recording import SAMPLE_FIELDS
from .simulation.params import SimulationParams
from .simulation.model_step import StepOutput
from .simulation.step import pair_memory, step

STATE_FIELDS = ("base_position", "base_quaternion", "base_velocity", "joint_positions", "joint_velocities", "contact_deformation")
OUTPUT_FIELDS = tuple(name for name in StepOutput._fields if name not in ("finite", "self_contacts"))


@dataclasses.dataclass(frozen=True)
class Keep:
    """Which samples of a run to keep: ``fields`` of every ``every``-th step, for ``worlds``.

    ``fields``: names of :class:`State` fields (the state after the step) and of
    :class:`StepOutput` arrays (what happened during the step; not its ``self_contacts``), by default those of a
    :class:`~jaxsim_like.recording.Recording` (``recording.SAMPLE_FIELDS``);
    ``every`` (>= 1): keep steps ``every - 1, 2 every - 1, ...`` (the run's step count must be a
    multiple of it); ``worlds``: indices of the worlds of a batch to keep (None: all).
    """

    fields: tuple[str, ...] = SAMPLE_FIELDS
    every: int = 1
    worlds: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        if self.worlds is not None:
            object.__setattr__(self, "worlds", tuple(int(w) for w in self.worlds))
        unknown = [name for name in self.fields if name not in STATE_FIELDS + OUTPUT_FIELDS]
        if unknown:
            raise ValueError(f"unknown field(s) {unknown} to keep; choose from {list(STATE_FIELDS + OUTPUT_FIELDS)}")
        if not self.fields:
            raise ValueError("Keep needs at least one field")
        if not (isinstance(self.every, int) and self.every >= 1):
            raise ValueError(f"every must be a positive integer, got {self.every!r}")


class Summary(NamedTuple):
    """Running statistics of a run, per world (arrays lead with the batch axis in a batch).

    ``first_nonfinite``: the first step whose result was not finite, -1 if none;
    ``max_penetration`` [m]: the deepest penetration of any collidable point over the run
    (0 without contact); ``contact_force (3,)`` [N]: the total contact force of the last step,
    world axes; ``pair_overflow`` (int32): with self-collisions, the most overlapping pairs of
    links that a pair kind's budget could not hold in one step (0: none was left untested;
    :attr:`~jaxsim_like.simulation.world.PairContacts.overflow`), or the most touching slots
    that the touching budget could not hold (:attr:`~jaxsim_like.simulation.world.PairContacts.dropped`). Non-finite steps do not enter
    the maximum penetration.
    """

    first_nonfinite: jax.Array
    max_penetration: jax.Array
    contact_force: jax.Array
    pair_overflow: jax.Array

    @staticmethod
    def start(dtype) -> "Summary":
        """The statistics of a run of no steps."""
        return Summary(jnp.asarray(-1, jnp.int32), jnp.zeros((), dtype), jnp.zeros(3, dtype), jnp.zeros((), jnp.int32))

    def update(self, outputs: StepOutput, index: jax.Array) -> "Summary":
        """The statistics after the step ``index`` with ``outputs``."""
        first = jnp.where((self.first_nonfinite < 0) & ~outputs.finite, index.astype(jnp.int32), self.first_nonfinite)
        deepest = jnp.max(outputs.penetration, initial=0.0)
        spilled = self.pair_overflow
        if outputs.self_contacts is not None:
            spilled = jnp.maximum(spilled, jnp.max(outputs.self_contacts.overflow, initial=0))
            if outputs.self_contacts.dropped is not None:
                spilled = jnp.maximum(spilled, outputs.self_contacts.dropped)
        return Summary(first, jnp.fmax(self.max_penetration, deepest), jnp.sum(outputs.contact_forces, axis=0), spilled)

    def then(self, later: "Summary", offset: int) -> "Summary":
        """The statistics of this run followed by ``later``, which started at step ``offset``."""
        later_first = jnp.where(later.first_nonfinite < 0, -1, later.first_nonfinite + offset)
        first = jnp.where(self.first_nonfinite < 0, later_first, self.first_nonfinite)
        return Summary(first, jnp.fmax(self.max_penetration, later.max_penetration), later.contact_force,
                       jnp.maximum(self.pair_overflow, later.pair_overflow))


def _pick(state: State, outputs: StepOutput, fields: tuple[str, ...]) -> dict[str, jax.Array]:
    return {name: getattr(state if name in STATE_FIELDS else outputs, name) for name in fields}


def monitored_rollout(
    model: Model,
    state: State,
    joint_torques: jax.Array,
    *,
    params: SimulationParams,
    keep: Keep | None = None,
    checkpoint: bool = False,
) -> tuple[State, Summary, dict[str, jax.Array] | None]:
    """Run ``T`` steps with ``joint_torques (T, n)``, keeping statistics and (with ``keep``) samples.

    Returns ``(final_state, summary, samples)``: ``samples`` maps each kept field to an array of
    ``T // keep.every`` samples ``(S, ...)``, or is None without ``keep``. ``checkpoint=True``
    rematerialises each step in the backward pass.
    """
    torques = jnp.asarray(joint_torques, state.joint_positions.dtype)
    steps = torques.shape[0]
    stats = Summary.start(state.joint_positions.dtype)

    def advance(carry, tau):
        current, summary, index = carry
        following, outputs = step(model, current, joint_torques=tau, params=params)
        return (following, summary.update(outputs, index), index + 1), (following, outputs)

    start = (pair_memory(params, state), stats, jnp.asarray(0, jnp.int32))
    if keep is None:
        body = jax.checkpoint(advance) if checkpoint else advance
        (final, summary, _), _ = jax.lax.scan(lambda c, u: (body(c, u)[0], None), start, torques)
        return final, summary, None
    if steps % keep.every:
        raise ValueError(f"the number of steps ({steps}) must be a multiple of Keep.every ({keep.every})")
    # The step traced once: for the samples' shapes, and in the loop (which reuses that trace).
    stepped = jax.jit(advance)
    shapes = _pick(*stepped.trace(start, torques[0]).out_info[1], keep.fields)
    body = jax.checkpoint(stepped) if checkpoint else stepped
    empty = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)

    def inner(carry, tau):
        run, _ = carry
        run, (following, outputs) = body(run, tau)
        return (run, _pick(following, outputs, keep.fields)), None

    def block(run, taus):
        (run, sample), _ = jax.lax.scan(inner, (run, empty), taus)
        return run, sample

    blocks = torques.reshape(steps // keep.every, keep.every, *torques.shape[1:])
    (final, summary, _), samples = jax.lax.scan(block, start, blocks)
    return final, summary, samples
