"""Bodies over the edge of a table among the terrain's boxes (:func:`jaxsim_like.scenes.table`)
rest where they are released, as on MuJoCo C: the world meets the terrain's boxes as shapes
(:mod:`jaxsim_like.simulation.scenery`), whose narrow phases find the table's edge under a
body's face (met through the bodies' points alone, a box 2 cm over the edge, a capsule and a
cylinder lying 8 and 5 cm over it tipped over and fell, and a cube flush with the edge had its
corners pushed out through the table's side and slid off)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY
from jaxsim_like.simulation.world import WorldModel, world_rollout

DT, STEPS, SINK = 0.005, 300, 0.0005
TOP, EDGE = 0.75, 0.4  # the table's upper face [m] and its edge along +x [m]
LYING = np.array([np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0])  # a capsule's or cylinder's axis along x
# name, model, overhang past the edge [m], half length along x [m], half height [m], y [m], orientation
BODIES = (
    ("box over", js.scenes.box((0.1, 0.1, 0.1), mass=1.0), 0.02, 0.05, 0.05, -0.21, np.array([1.0, 0.0, 0.0, 0.0])),
    ("flush box", js.scenes.box((0.1, 0.1, 0.1), mass=1.0, name="flush"), 0.0, 0.05, 0.05, -0.07, np.array([1.0, 0.0, 0.0, 0.0])),
    ("capsule", js.scenes.capsule(0.02, 0.3, mass=1.0), 0.08, 0.17, 0.02, 0.07, LYING),
    ("cylinder", js.scenes.cylinder(0.03, 0.2, mass=1.0), 0.05, 0.1, 0.03, 0.21, LYING),
)


@pytest.fixture(scope="module")
def rested():
    """The world of the table and ``BODIES``, each released ``SINK`` deep with its centre over the
    top, after ``STEPS`` steps: the start and final states and the last step's outputs."""
    models = [body[1] for body in BODIES]
    world = WorldModel.build(models, dt=DT, terrain=js.scenes.table(height=TOP), friction=0.5)
    states = [js.State.build(model, base_position=[EDGE + over - half, y, TOP + height - SINK], base_quaternion=quaternion)
              for _, model, over, half, height, y, quaternion in BODIES]
    start = world.initial_state(states)
    final, outputs = jax.jit(lambda s: world_rollout(world, s, None, STEPS))(start)
    return world, start, final, jax.tree.map(lambda x: x[-1], outputs)


def test_the_tables_boxes_are_the_worlds_last_model(rested):
    """The table (top and four legs) is the world's last model, welded to the world; the bodies'
    own terrain is the floor alone."""
    world, start, _, _ = rested
    assert world.scenery == 1 and len(world.models) == len(BODIES) + 1
    assert world.models[-1].shape_kind == ("box",) * 5 and not world.models[-1].floating_base
    assert len(start.states) == len(BODIES) + 1
    assert world.params.terrain.box_transforms.shape[0] == 0
    with pytest.raises(ValueError, match=r"states must have one entry per model \(4, or 5 with the terrain's boxes\), got 3"):
        world.initial_state(start.states[:3])


@pytest.mark.parametrize("k", range(len(BODIES)), ids=[body[0] for body in BODIES])
def test_a_body_over_the_tables_edge_rests_where_it_was_released(rested, k):
    """After 1.5 s each body is at rest (below 1e-6 m/s and rad/s), within 0.5 mm of where it was
    released and level within 2e-3 rad (the contacts' compliance: the table's edge carries three
    quarters of the cylinder's weight and sinks about twice as deep as its far end, 0.15 m away:
    1.1e-3 rad), and the table carries its weight through the pairs (within 0.5 %)."""
    world, start, final, outputs = rested
    state, begun = final.states[k], start.states[k]
    assert np.max(np.abs(np.asarray(state.base_velocity))) < 1e-6
    np.testing.assert_allclose(np.asarray(state.base_position), np.asarray(begun.base_position), atol=5e-4)
    assert 2 * np.arccos(min(1.0, abs(float(np.dot(state.base_quaternion, begun.base_quaternion))))) < 2e-3
    contacts = outputs.pairs.contacts
    forces = np.asarray(outputs.pairs.forces)
    link = world.collision.link_offsets[k]
    on_body = forces[np.asarray(contacts.active & (contacts.link_a == link))].sum(axis=0)
    on_body -= forces[np.asarray(contacts.active & (contacts.link_b == link))].sum(axis=0)
    np.testing.assert_allclose(on_body, [0.0, 0.0, 1.0 * STANDARD_GRAVITY], atol=5e-3 * STANDARD_GRAVITY)
