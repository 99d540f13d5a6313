"""The humanoid dropped from 0.5 m above its standing height, unactuated, for 10 simulated seconds."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

DT = 0.001
CHUNK = 1000
SECONDS = 10
STANDING_HEIGHT = 1.03
LONG_RUN = {"xla_backend_optimization_level": 3}
"""XLA's default optimisation, back for the programs that run thousands of steps (the suite compiles at level 0)."""


@functools.partial(jax.jit, static_argnames=("steps",), compiler_options=LONG_RUN)
def chunk(model, state, params, *, steps):
    """``steps`` steps, keeping only per-step summaries (the contact outputs of 196 points are large)."""
    final, (states, outputs) = js.rollout(model, state, jnp.zeros((steps, model.dofs)), params=params)
    finite = jnp.all(jnp.isfinite(states.base_position)) & jnp.all(jnp.isfinite(states.joint_positions))
    return final, states.base_position, states.base_velocity, states.joint_velocities, jnp.max(outputs.penetration, axis=1), finite


@pytest.fixture(scope="session")
def dropped(humanoid):
    """Per-step base positions, base velocities, joint velocities and deepest penetration over 10 s."""
    params = js.SimulationParams.build(humanoid, dt=DT)
    state = js.State.build(humanoid, base_position=[0.0, 0.0, STANDING_HEIGHT + 0.5])
    pieces = []
    for _ in range(SECONDS * int(1 / (DT * CHUNK))):
        state, *summary, finite = chunk(humanoid, state, params, steps=CHUNK)
        assert bool(finite), f"non-finite state within the first {(len(pieces) + 1) * CHUNK * DT:.0f} s"
        pieces.append([np.asarray(x) for x in summary])
    return [np.concatenate(parts) for parts in zip(*pieces)]


def test_humanoid_drop_stays_finite(dropped, figures):
    positions, velocities, joint_velocities, penetration = dropped
    assert len(positions) == SECONDS * int(1 / DT)
    assert np.isfinite(velocities).all() and np.isfinite(joint_velocities).all() and np.isfinite(penetration).all()
    figures("humanoid drop: final pelvis height", positions[-1, 2], "m")
    assert positions[:, 2].min() > 0.0  # the pelvis never goes through the ground
    assert positions[-1, 2] < STANDING_HEIGHT  # it fell: the joints are limp


def test_humanoid_penetration_below_1cm_at_rest(dropped, figures):
    penetration = dropped[3]
    figures("humanoid drop: max penetration over the last 2 s", penetration[-2000:].max(), "m")
    assert 0.0 < penetration[-2000:].max() < 0.01


def test_humanoid_penetration_at_the_default_step_stays_below_1cm(dropped, figures):
    """At dt = 1 ms the implicit step's contacts (designed for 1 mm, critically damped) stop the
    3.1 m/s touchdown and the fall onto thighs and head within 1 cm of penetration throughout
    (5.5 mm measured; the explicit step, with the damping capped for its stability, let it sink
    4.4 cm)."""
    penetration = dropped[3]
    worst = int(np.argmax(penetration))
    figures("humanoid drop, dt 1 ms: max penetration over 10 s", penetration.max(), "m")
    figures("humanoid drop, dt 1 ms: time of the max penetration", worst * DT, "s")
    assert penetration.max() < 0.01


FINE_DT = 1e-4
FINE_SECONDS = 2.0


def test_humanoid_penetration_below_1cm_throughout_the_drop_at_fine_step(humanoid, figures):
    """With dt = 0.1 ms and contacts designed for 0.5 mm, the whole drop (touchdown at 3.1 m/s,
    then the fall onto thighs and head) stays below 1 cm of penetration."""
    params = js.SimulationParams.build(humanoid, dt=FINE_DT, max_penetration=5e-4)
    state = js.State.build(humanoid, base_position=[0.0, 0.0, STANDING_HEIGHT + 0.5])
    deepest = []
    for _ in range(int(round(FINE_SECONDS / (FINE_DT * CHUNK)))):  # the drop's compiled chunk
        state, _, _, _, penetration, finite = chunk(humanoid, state, params, steps=CHUNK)
        assert bool(finite)
        deepest.append(np.asarray(penetration))
    deepest = np.concatenate(deepest)
    figures("humanoid drop, dt 0.1 ms: max penetration over the first 2 s", deepest.max(), "m")
    assert deepest.max() < 0.01, f"{deepest.max() * 100:.2f} cm deep at t = {int(np.argmax(deepest)) * FINE_DT:.4f} s"


def test_humanoid_comes_to_rest(dropped, figures):
    """Over the last 2 s the base neither moves (< 1 mm/s linear) nor drifts (< 1 mm/s on average)."""
    positions, velocities, joint_velocities, _ = dropped
    last = slice(-2000, None)
    speed = np.linalg.norm(velocities[last, :3], axis=1).max()
    drift = np.linalg.norm(positions[-1] - positions[-2000]) / 2.0
    figures("humanoid at rest: max base speed over the last 2 s", speed, "m/s")
    figures("humanoid at rest: base drift over the last 2 s", drift, "m/s")
    figures("humanoid at rest: max base angular speed, last 2 s", np.linalg.norm(velocities[last, 3:], axis=1).max(), "rad/s")
    figures("humanoid at rest: max joint speed, last 2 s", np.abs(joint_velocities[last]).max(), "rad/s")
    assert speed < 1e-3
    assert drift < 1e-3
