"""The step of one model meets the terrain's static boxes as shapes (``SimulationParams.build``'s
``static_boxes="shapes"``, the default): the boxes are a model welded to the world of that model
(:attr:`SimulationParams.scenery`), so a box over a table's edge rests on the edge, as in a world
(``tests/simulation/test_table_edges.py``). Met by the model's points (``static_boxes="points"``)
the edge under its face is no contact, and the box tips over it and falls."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY
from jaxsim_like.simulation.world import WorldModel, world_rollout

DT, STEPS, SINK = 0.005, 300, 0.0005
TOP, EDGE, OVER = 0.75, 0.4, 0.02  # the table's upper face [m], its edge along +x [m], the box past it [m]
BOX = js.scenes.box((0.1, 0.1, 0.1), mass=1.0)
TABLE = js.scenes.table(height=TOP)
START = js.State.build(BOX, base_position=[EDGE + OVER - 0.05, 0.0, TOP + 0.05 - SINK])


def _rollout(params: js.SimulationParams):
    return jax.jit(lambda s: js.rollout(BOX, s, jnp.zeros((STEPS, 0)), params=params))(START)


@pytest.fixture(scope="module")
def on_shapes():
    params = js.SimulationParams.build(BOX, dt=DT, terrain=TABLE, friction=0.5)
    final, (states, outputs) = _rollout(params)
    return params, final, states, jax.tree.map(lambda x: x[-1], outputs)


def test_the_boxes_are_a_model_welded_to_the_world_and_the_ground_is_the_terrain(on_shapes):
    params, final, _, _ = on_shapes
    assert params.scenery.model.shape_kind == ("box",) * 5 and not params.scenery.model.floating_base
    assert params.world.terrain.box_transforms.shape[0] == 0
    assert params.collisions.table.links == 2
    assert final.pair_deformation.shape == (params.collisions.table.candidate_slots, 3)


def test_a_box_over_the_tables_edge_rests_on_it_through_the_step(on_shapes, figures):
    """After 1.5 s the box is at rest where it was released (within 0.5 mm, level within 2e-3
    rad), at the pairs' depth, and the table's top carries its weight through the contacts that
    ``self_contacts`` reports (within 0.5 %)."""
    params, final, _, outputs = on_shapes
    moved = np.asarray(final.base_position - START.base_position)
    figures("box 2 cm over the table's edge, one model's step: moved", np.linalg.norm(moved), "m")
    assert np.max(np.abs(np.asarray(final.base_velocity))) < 1e-6
    np.testing.assert_allclose(moved[:2], 0.0, atol=5e-4)
    depth = TOP + 0.05 - float(final.base_position[2])
    assert depth == pytest.approx(float(params.collisions.pair_law.max_penetration), rel=0.1)
    assert 2 * np.arccos(min(1.0, abs(float(np.dot(final.base_quaternion, START.base_quaternion))))) < 2e-3
    contacts = outputs.self_contacts.contacts
    carried = np.asarray(outputs.self_contacts.forces)[np.asarray(contacts.active)].sum(axis=0)
    np.testing.assert_allclose(carried, [0.0, 0.0, STANDARD_GRAVITY], atol=5e-3 * STANDARD_GRAVITY)
    assert not np.asarray(outputs.in_contact).any()  # the floor is far below


def test_the_step_is_the_world_step_of_the_model_and_the_boxes(on_shapes):
    """The rollout of ``step`` equals that of the world of the box on the table (to 1e-12)."""
    _, final, _, _ = on_shapes
    world = WorldModel.build([BOX], dt=DT, terrain=TABLE, friction=0.5)
    end, _ = jax.jit(lambda s: world_rollout(world, s, None, STEPS))(world.initial_state([START]))
    for name in ("base_position", "base_quaternion", "base_velocity"):
        np.testing.assert_allclose(getattr(final, name), getattr(end.states[0], name), atol=1e-12)
    np.testing.assert_allclose(final.pair_deformation, end.pair_deformation, atol=1e-12)


def test_met_by_its_points_the_box_falls_off_the_edge():
    params = js.SimulationParams.build(BOX, dt=DT, terrain=TABLE, friction=0.5, static_boxes="points")
    assert params.scenery is None and params.collisions is None
    final, _ = _rollout(params)
    assert float(final.base_position[2]) < TOP - 0.02


def test_a_bad_choice_is_named():
    with pytest.raises(ValueError, match="static_boxes must be one of"):
        js.SimulationParams.build(BOX, terrain=TABLE, static_boxes="mesh")


def test_links_without_terrain_contacts_and_welded_links_meet_no_box():
    """``contact_enabled_links`` switches a link's contacts with the boxes as with the ground; a
    fixed base standing in the table's top (a link welded to the world, as the boxes are) has no
    pair with them, its moving link does."""
    assert js.SimulationParams.build(BOX, dt=DT, terrain=TABLE, contact_enabled_links=[False]).collisions is None
    inertial = '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
    arm = js.load_model(f"""<robot name="arm"><link name="base">{inertial}<collision><geometry><box size="0.2 0.2 0.2"/></geometry>
        </collision></link><link name="tip">{inertial}<collision><origin xyz="0 0 0.5"/><geometry><sphere radius="0.05"/></geometry>
        </collision></link><joint name="j" type="revolute"><parent link="base"/><child link="tip"/><axis xyz="0 1 0"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>""", floating_base=False)
    table = js.SimulationParams.build(arm, dt=DT, terrain=TABLE).collisions.table
    assert {(g.kind, table.shape_link[g.first[0]]) for g in table.groups} == {("sphere-box", 1)}
