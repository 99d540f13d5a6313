"""The load a link carries, which sizes the contact laws of the world step (``world._loaded``):
the weight of what rests on it, never the forces of an impact, which would stiffen the next
step's laws by as much and push the bodies apart harder than their depth built up (the 125-body
pile of ``benchmarks/pile.py`` diverged so at 5 ms); and what other bodies press it into a wall
with, across gravity, which its terrain law carries too (a wall among the terrain's boxes, met
through the bodies' points: a world of :meth:`WorldModel.assemble` whose models' terrain has the
boxes; the worlds of :meth:`WorldModel.build` and of the object API meet them as shapes,
:mod:`jaxsim_like.simulation.scenery`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from collision_worlds import cube

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY
from jaxsim_like.simulation.collision.collisions import Collisions
from jaxsim_like.simulation.world import ModelInputs, WorldModel, world_rollout, world_step

MASS, SIDE, DT = 1.0, 0.1, 0.005
WALL = 0.5  # [m]: the wall's face, across x


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



def test_a_cube_pressed_into_a_wall_rests_at_max_penetration_with_the_wall_carrying_the_push():
    """Two cubes on a shelf (a terrain box), the outer one pushed along x by ``F``, a cube's
    weight, into the inner one, which sticks out past the shelf's edge against a wall (another
    terrain box; no floor-and-wall edge): at rest the inner cube's terrain law is sized for the
    force the outer one presses it into the wall with across gravity (``wall_load``; the outer
    one, on the shelf only, carries none), and it sinks by ``max_penetration`` within 10 %
    (sized for its weight alone, 1.35 times as deep and still rocking), its contacts in balance
    with its weight."""
    models = [jax.tree.map(lambda x: x.astype(jnp.float64) if jnp.issubdtype(x.dtype, jnp.floating) else x,
                           cube(f"cube{i}", MASS, SIDE)) for i in range(2)]
    boxes = np.stack([np.eye(4)] * 2)
    boxes[0, 0, 3], boxes[1, 0, 3], boxes[1, 2, 3] = WALL + 0.1, WALL - 0.01 - 0.5, -0.5  # the wall; the shelf, top at z = 0
    terrain = js.Terrain.plane(height=-2.0).with_boxes(boxes, [[0.1, 1.0, 1.0], [0.5, 1.0, 0.5]])
    built = [js.SimulationParams.build(m, dt=DT, terrain=terrain, friction=0.5, static_boxes="points") for m in models]
    world = WorldModel.assemble(models, [b.model for b in built], built[0].world, Collisions.build(models))
    inner = WALL - SIDE / 2 + 0.001
    states = [js.State.build(m, base_position=jnp.array([x, 0.0, SIDE / 2 - 0.001]))
              for m, x in zip(models, (inner, inner - SIDE + 0.0005))]
    weight = MASS * STANDARD_GRAVITY
    inputs = [None, ModelInputs(link_wrenches=jnp.array([[weight, 0.0, 0.0, 0.0, 0.0, 0.0]]))]
    state, outputs = jax.jit(lambda s: world_rollout(world, s, inputs, 300))(world.initial_state(states))
    depth = np.asarray(outputs.models[0].penetration[-1])
    terrain_forces = np.asarray(outputs.models[0].contact_forces[-1])
    into_wall = np.asarray(outputs.models[0].contact_normals[-1])[:, 0] < -0.5
    pairs = outputs.pairs
    on_inner = np.asarray(pairs.forces[-1])[np.asarray(pairs.contacts.active[-1] & (pairs.contacts.link_a[-1] == 0))].sum(axis=0)
    on_inner -= np.asarray(pairs.forces[-1])[np.asarray(pairs.contacts.active[-1] & (pairs.contacts.link_b[-1] == 0))].sum(axis=0)
    assert np.max(np.abs(np.asarray(state.states[0].base_velocity))) < 1e-6
    assert 0.9e-3 < depth.max() < 1.1e-3  # max_penetration: 1 mm
    np.testing.assert_allclose(terrain_forces.sum(axis=0) + on_inner, [0.0, 0.0, weight], atol=1e-6 * weight)
    wall_load = np.asarray(state.wall_load)
    np.testing.assert_allclose(wall_load[0], on_inner[0], rtol=1e-9)  # along minus the wall's normal
    assert -terrain_forces[into_wall, 0].sum() > 0.8 * wall_load[0]  # the rest held by the shelf's friction
    assert 0.5 * weight < wall_load[0] < 1.5 * weight and wall_load[1] == 0.0  # F and the outer cube's friction, 0.5 its weight
