"""The load a link carries, which sizes the contact laws of the world step (``world._loaded``):
the weight of what rests on it, never the forces of an impact, which would stiffen the next
step's laws by as much and push the bodies apart harder than their depth built up (the 125-body
pile of ``benchmarks/pile.py`` diverged so at 5 ms)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from collision_worlds import cube

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY
from jaxsim_like.simulation.world import WorldModel, world_rollout, world_step

MASS, SIDE, DT = 1.0, 0.1, 0.005


def _stack(speed: float) -> tuple[WorldModel, object]:
    """Three cubes stacked on the ground (float64), the top one coming down at ``speed`` [m/s]
    as it touches the middle one."""
    models = [jax.tree.map(lambda x: x.astype(jnp.float64) if jnp.issubdtype(x.dtype, jnp.floating) else x,
                           cube(f"cube{i}", MASS, SIDE)) for i in range(3)]
    world = WorldModel.build(models, dt=DT, friction=0.5)
    heights = [SIDE / 2 - 0.001, 1.5 * SIDE - 0.0012, 2.5 * SIDE - 0.0013]
    velocity = [np.zeros(6), np.zeros(6), np.array([0.0, 0.0, -speed, 0.0, 0.0, 0.0])]
    states = [js.State.build(m, base_position=jnp.array([0.0, 0.0, z]), base_velocity=jnp.asarray(v))
              for m, z, v in zip(models, heights, velocity)]
    return world, world.initial_state(states)


def test_an_impact_loads_a_link_with_the_weight_above_it_not_the_impact():
    """The top cube lands at 2 m/s: the middle one is pressed far harder than the top one's
    weight, yet carries that weight only, and the bottom one the weight of both."""
    world, state = _stack(2.0)
    step = jax.jit(lambda s: world_step(world, s))
    weight = MASS * STANDARD_GRAVITY
    hardest = 0.0
    for _ in range(6):
        state, outputs = step(state)
        pairs = outputs.pairs
        on_middle = np.asarray(pairs.forces)[np.asarray(pairs.contacts.active & (pairs.contacts.link_a == 1) & (pairs.contacts.link_b == 2))]
        hardest = max(hardest, -float(np.sum(on_middle[:, 2])))
        load = np.asarray(state.pair_load)
        assert load[2] == 0.0
        assert 0.0 <= load[1] <= weight * (1 + 1e-9)
        assert 0.0 <= load[0] <= 2 * weight * (1 + 1e-9)
    assert hardest > 20 * weight  # an impact: what the load would have been


def test_a_resting_stack_loads_each_link_with_the_weight_above_it():
    """At rest, the middle cube carries the top one's weight and the bottom one both, to 0.1 %."""
    world, state = _stack(0.0)
    state, _ = jax.jit(lambda s: world_rollout(world, s, None, 200))(state)
    weight = MASS * STANDARD_GRAVITY
    np.testing.assert_allclose(np.asarray(state.pair_load), [2 * weight, weight, 0.0], rtol=1e-3, atol=1e-9)

