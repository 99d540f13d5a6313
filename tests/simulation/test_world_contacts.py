"""Models touching each other in the world step: stacked cubes against statics, a sphere rolling
down a tilted box at the analytic acceleration, a capsule resting across a capsule, a box pushed
by a driven link sliding with Coulomb friction, and a gradient through an object-object contact
equal to central differences (through every slot, and through the touching budget)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import cube, solid

import jaxsim_like as js
from jaxsim_like.dynamics import spatial
from jaxsim_like.simulation import control
from jaxsim_like.simulation.world import ModelInputs, WorldModel, world_rollout

G = 9.81
rollout = jax.jit(world_rollout, static_argnames="steps")


def test_a_cube_on_two_cubes_rests_with_the_forces_of_statics():
    """Three 5 kg cubes of 0.2 m, the top one across the two others (1 mm apart): each lower cube
    carries half the top one, the ground 1.5 weights per lower cube, within 1 %; each contact is
    reported between the right bodies, about a millimetre deep."""
    models = [cube("left"), cube("right"), cube("top")]
    states = [
        js.State.build(models[0], base_position=[-0.1005, 0.0, 0.1]),
        js.State.build(models[1], base_position=[0.1005, 0.0, 0.1]),
        js.State.build(models[2], base_position=[0.0, 0.0, 0.302]),
    ]
    world = WorldModel.build(models, dt=0.002)
    final, outputs = rollout(world, world.initial_state(states), None, steps=250)
    weight = 5.0 * G
    last = jax.tree.map(lambda x: np.asarray(x[-1]), outputs.pairs)
    contacts, forces = last.contacts, last.forces
    active = contacts.active
    pairs = {(int(a), int(b)) for a, b in zip(contacts.link_a[active], contacts.link_b[active])}
    assert pairs == {(0, 2), (1, 2)}  # global links: left 0, right 1, top 2 (the lower cubes do not touch)
    for lower in (0, 1):
        on_top = forces[active & (contacts.link_a == lower)].sum(axis=0)  # on the lower cube, from the top one
        assert on_top[2] == pytest.approx(-weight / 2, rel=0.01)
        ground = np.asarray(outputs.models[lower].contact_forces[-1]).sum(axis=0)
        assert ground[2] == pytest.approx(1.5 * weight, rel=0.01)
        # Static friction holds what the settling locked in: inside the cone, balanced by the ground.
        assert np.linalg.norm(on_top[:2]) < 0.5 * weight / 2
        np.testing.assert_allclose(on_top[:2] + ground[:2], 0.0, atol=1e-6 * weight)
    depth = contacts.depth[active]
    assert np.all((depth > 1e-4) & (depth < 2e-3))
    assert np.all(contacts.normal[active][:, 2] < -0.99)  # from the top cube (b) down into the lower one (a)
    speeds = [float(jnp.linalg.norm(s.base_velocity)) for s in final.states]
    assert max(speeds) < 1e-3


def test_a_sphere_rolls_down_a_tilted_box_at_five_sevenths_g_sin():
    """A 1 kg solid sphere released on a box tilted by 10 degrees (welded to the world) rolls
    without slipping: its centre accelerates at 5/7 g sin(10 deg) within 1 % (sliding would give
    g sin - mu g cos < 0, a free fall g sin), then rolls off."""
    tilt = np.deg2rad(10.0)
    radius = 0.1
    ramp = solid("ramp", '<box size="1 1 0.2"/>', 10.0, 1.0, fixed=True)
    ball = solid("ball", f'<sphere radius="{radius}"/>', 1.0, 0.4 * radius**2)
    quaternion = np.array([np.cos(tilt / 2), 0.0, -np.sin(tilt / 2), 0.0])
    R = np.asarray(spatial.quaternion_to_rotation(jnp.asarray(quaternion)))
    normal, downhill = R[:, 2], -R[:, 0]
    centre = np.array([0.0, 0.0, 1.0])
    start = centre + (0.1 + radius - 2e-4) * normal - 0.4 * downhill
    states = [
        js.State.build(ramp, base_position=centre, base_quaternion=quaternion),
        js.State.build(ball, base_position=start),
    ]
    world = WorldModel.build([ramp, ball], dt=0.002, terrain=js.Terrain.plane(-5.0))
    steps = 700
    final, outputs = rollout(world, world.initial_state(states), None, steps=steps)
    travelled = (np.asarray(outputs.reports[1].link_origins[:, 0]) - start) @ downhill
    t = np.arange(steps) * 0.002
    fit = np.polyfit(t[100:350], travelled[100:350], 2)
    assert 2 * fit[0] == pytest.approx(5 / 7 * G * np.sin(tilt), rel=0.01)
    assert travelled[-1] > 0.9 and float(final.states[1].base_velocity[2]) < -1.0  # off the ramp, falling


def test_a_capsule_rests_across_a_capsule():
    """A 1 kg capsule laid across another one lying on the ground: the crossing carries its
    weight, along the vertical, within 1 %."""
    rod = '<capsule radius="0.05" length="0.4"/>'
    lower, upper = solid("lower", rod, 2.0, 0.03), solid("upper", rod, 1.0, 0.015)
    lying = np.array([np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0])  # segment along x
    crossing = np.array([np.cos(np.pi / 4), -np.sin(np.pi / 4), 0.0, 0.0])  # segment along y
    states = [
        js.State.build(lower, base_position=[0.0, 0.0, 0.05], base_quaternion=lying),
        js.State.build(upper, base_position=[0.0, 0.0, 0.1505], base_quaternion=crossing),
    ]
    world = WorldModel.build([lower, upper], dt=0.002)
    final, outputs = rollout(world, world.initial_state(states), None, steps=250)
    last = jax.tree.map(lambda x: np.asarray(x[-1]), outputs.pairs)
    on_upper = np.where(last.contacts.link_a[:, None] == 1, last.forces, -last.forces)[last.contacts.active].sum(axis=0)
    np.testing.assert_allclose(on_upper, [0.0, 0.0, G], rtol=0.01, atol=0.01 * G)
    gap = float(final.states[1].base_position[2] - final.states[0].base_position[2])
    assert gap == pytest.approx(0.1, abs=2e-3)  # the radii, a millimetre deep


PUSHER = """<robot name="pusher">
  <link name="world"/>
  <joint name="rail" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 0.05"/></joint>
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="paddle"/><axis xyz="1 0 0"/>
    <limit lower="-2" upper="2" effort="1000" velocity="5"/></joint>
  <link name="paddle"><inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.04 0.3 0.06"/></geometry></collision></link>
</robot>"""


def test_a_box_pushed_by_a_driven_link_slides_with_coulomb_friction():
    """A paddle on a prismatic joint, velocity-controlled towards 0.3 m/s by its PID, pushes a
    2 kg box along the ground (friction 0.5): the box moves with the paddle, the ground's
    friction is mu times its normal force and the push balances it, within 2 %."""
    pusher = js.load_model(PUSHER)
    box = cube("box", mass=2.0, side=0.1)
    table = control.default_table(np.full(1, 1000.0), np.full(1, 5.0))
    table[:, control.MODE] = int(control.JointControlMode.velocity)
    table[:, control.KP], table[:, control.KI], table[:, control.KD] = 400.0, 0.0, 0.0
    table[:, control.VELOCITY_TARGET] = 0.3
    states = [
        js.State.build(pusher, joint_positions=[-0.03]),
        js.State.build(box, base_position=[0.0505, 0.0, 0.0498]),
    ]
    world = WorldModel.build([pusher, box], dt=0.002)
    inputs = [ModelInputs(table=jnp.asarray(table), period=jnp.asarray(0.0)), None]
    final, outputs = rollout(world, world.initial_state(states), inputs, steps=300)
    paddle = float(final.states[0].joint_velocities[0])
    assert 0.25 < paddle < 0.3 and float(final.states[1].base_velocity[0]) == pytest.approx(paddle, rel=0.02)
    pushes = np.asarray(outputs.pairs.forces[-50:])
    on_box = np.where(np.asarray(outputs.pairs.contacts.link_a[-50:])[..., None] == 2, pushes, -pushes)
    push = (on_box * np.asarray(outputs.pairs.contacts.active[-50:])[..., None]).sum(axis=1).mean(axis=0)
    ground = np.asarray(outputs.models[1].contact_forces[-50:]).sum(axis=1).mean(axis=0)
    # The ground's sliding friction is mu times its normal force (which the paddle's static
    # friction may load beyond the box's weight), and the push balances it.
    assert ground[0] == pytest.approx(-0.5 * ground[2], rel=0.02)
    assert push[0] == pytest.approx(-ground[0], rel=0.02)
    assert ground[2] == pytest.approx(2.0 * G - push[2], rel=0.01)


def test_gradients_through_an_object_object_contact_equal_central_differences():
    """A ball thrown at a resting cube: the cube's final position depends smoothly on the throw;
    the gradient equals central differences to 1e-4 relative and is finite."""
    ball = solid("ball", '<sphere radius="0.05"/>', 0.5, 0.0005)
    block = cube("block", mass=1.0, side=0.1)
    world = WorldModel.build([ball, block], dt=0.002, gravity=[0.0, 0.0, 0.0], terrain=js.Terrain.plane(-5.0))
    start_block = js.State.build(block, base_position=[0.2, 0.0, 0.0])

    def loss(speed):
        thrown = js.State.build(ball, base_position=[0.0, 0.0, 0.01], base_velocity=jnp.array([speed, 0.0, 0.0, 0.0, 0.0, 0.0]))
        final, _ = world_rollout(world, world.initial_state([thrown, start_block]), None, steps=60, checkpoint=True)
        return final.states[1].base_position[0] + 0.3 * final.states[1].base_position[2]

    value_and_grad = jax.jit(jax.value_and_grad(loss))
    value, gradient = value_and_grad(1.5)
    assert float(value) > 0.2 + 1e-3  # the ball hit the block
    h = 1e-4  # the values of the compiled gradient (no second compilation)
    numeric = (value_and_grad(1.5 + h)[0] - value_and_grad(1.5 - h)[0]) / (2 * h)
    assert np.isfinite(float(gradient)) and float(gradient) == pytest.approx(float(numeric), rel=1e-4)


def test_gradients_through_the_touching_budget_equal_central_differences():
    """The same throw with a second ball far away and a touching budget of one slot (of the
    table's three): the step solves the gathered touching slot alone, and the gradient through
    the gather is finite and equals central differences to 1e-4 relative."""
    ball, far = (solid(name, '<sphere radius="0.05"/>', 0.5, 0.0005) for name in ("ball", "far"))
    block = cube("block", mass=1.0, side=0.1)
    world = WorldModel.build([ball, block, far], dt=0.002, gravity=[0.0, 0.0, 0.0], terrain=js.Terrain.plane(-5.0), touching_budget=1)
    assert world.touching == 1 < world.collision.size
    start_block, start_far = js.State.build(block, base_position=[0.2, 0.0, 0.0]), js.State.build(far, base_position=[0.0, 1.0, 0.0])

    def loss(speed):
        thrown = js.State.build(ball, base_position=[0.0, 0.0, 0.01], base_velocity=jnp.array([speed, 0.0, 0.0, 0.0, 0.0, 0.0]))
        final, outputs = world_rollout(world, world.initial_state([thrown, start_block, start_far]), None, steps=60, checkpoint=True)
        return final.states[1].base_position[0] + 0.3 * final.states[1].base_position[2], jnp.max(outputs.pairs.dropped)

    value_and_grad = jax.jit(jax.value_and_grad(loss, has_aux=True))
    (value, dropped), gradient = value_and_grad(1.5)
    assert float(value) > 0.2 + 1e-3 and int(dropped) == 0  # the ball hit the block, on the budget's one slot
    h = 1e-4
    numeric = (value_and_grad(1.5 + h)[0][0] - value_and_grad(1.5 - h)[0][0]) / (2 * h)
    assert np.isfinite(float(gradient)) and float(gradient) == pytest.approx(float(numeric), rel=1e-4)


def test_two_robots_and_three_objects_under_jit_vmap():
    """The cart-pole carrying a cube with a ball on it, the pendulum swinging nearby and a rod
    lying on the ground: four worlds with different pushes on the cart under jit(vmap) stay
    finite, the cube rides the cart and the ball stays on the cube. (Gradients through
    object-object contacts are checked on the two-body world above: this world's gradient
    compiles in about a minute.)"""
    cart_pole = js.load_model(js.models.path("cart_pole"))
    pendulum = js.load_model(js.models.path("pendulum"))
    block = cube("block", mass=0.5, side=0.1)
    ball = solid("ball", '<sphere radius="0.04"/>', 0.1, 6.4e-5)
    rod = solid("rod", '<capsule radius="0.03" length="0.5"/>', 0.5, 0.01)
    lying = np.array([np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0])
    models = [cart_pole, pendulum, block, ball, rod]
    states = [
        js.State.build(cart_pole, joint_positions=[0.0, 0.3]),
        js.State.build(pendulum, base_position=[3.0, 0.0, 1.5], joint_positions=[0.5]),
        js.State.build(block, base_position=[0.0, -0.05, 0.67]),
        js.State.build(ball, base_position=[0.0, -0.05, 0.762]),
        js.State.build(rod, base_position=[1.0, 1.0, 0.03], base_quaternion=lying),
    ]
    world = WorldModel.build(models, dt=0.002)
    start = world.initial_state(states)

    def pushed(push):
        inputs = [ModelInputs(joint_torques=jnp.stack([push, 0.0])), None, None, None, None]
        final, outputs = world_rollout(world, start, inputs, steps=60)
        return final, jnp.all(outputs.finite)

    final, finite = jax.jit(jax.vmap(pushed))(jnp.array([-2.0, 0.0, 1.0, 3.0]))
    assert bool(jnp.all(finite))
    cart = final.states[0].joint_positions[:, 0]
    assert float(cart[3]) > float(cart[2]) > 0.002 and float(cart[0]) < -0.002
    np.testing.assert_allclose(final.states[2].base_position[:, 0], cart, atol=2e-3)  # the cube rides the cart
    assert float(jnp.min(final.states[3].base_position[:, 2])) > 0.74  # the ball stays on the cube
