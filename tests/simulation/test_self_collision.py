"""Self-collisions: the pair table, the geometry, and the physics of links hitting each other.

The models are small URDFs written here. The arm is a fixed (or floating) base carrying an
obstacle (box, sphere or capsule) 0.5 m from the second joint, a short first link and a 0.5 m
second link with a sphere of radius 2 cm at its tip (12 collidable points): joint axes are vertical, so
gravity does not move it, and the tip swings into the obstacle of the base (the grandparent of
its link: not adjacent). The slider presses one point into a sphere of its base along a line.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics import build_model, centroidal_momentum
from jaxsim_like.dynamics import kinematics as kin_module
from jaxsim_like.parsers import parse_model, parse_srdf
from jaxsim_like.simulation import SelfCollision, self_collision, self_contacts

DT = 1e-3
OBSTACLE_CENTRE = np.array([0.45, 0.4330127, 1.0])  # 0.5 m from the second joint, at 60 degrees
OBSTACLES = {  # collision, and the smallest distance from its centre to its surface [m]
    "box": ('<origin xyz="0.45 0.4330127 0" rpy="0 0 0.5235988"/><geometry><box size="0.1 0.1 0.2"/></geometry>', 0.05),
    "sphere": ('<origin xyz="0.45 0.4330127 0"/><geometry><sphere radius="0.06"/></geometry>', 0.06),
    "capsule": ('<origin xyz="0.45 0.4330127 0" rpy="0 1.5707963 0"/><geometry><capsule radius="0.05" length="0.2"/></geometry>', 0.05),
}
TIP_RADIUS = 0.02
INERTIA = '<inertia ixx="{0}" iyy="{1}" izz="{1}" ixy="0" ixz="0" iyz="0"/>'


def arm_urdf(obstacle: str = "box", *, fixed: bool = True, lumped_tip: bool = False) -> str:
    """The arm; ``lumped_tip`` puts the tip sphere on a ``tip`` link welded to ``link2`` (lumped)."""
    tip_sphere = f'<geometry><sphere radius="{TIP_RADIUS}"/></geometry>'
    welded = (
        '<link name="world"/><joint name="weld" type="fixed"><parent link="world"/><child link="base"/>'
        '<origin xyz="0 0 1"/></joint>'
        if fixed
        else ""
    )
    if lumped_tip:
        tip = (
            f'<link name="tip"><inertial><mass value="0.05"/>{INERTIA.format(1e-5, 1e-5)}</inertial>'
            f"<collision>{tip_sphere}</collision></link>"
            '<joint name="tip_weld" type="fixed"><parent link="link2"/><child link="tip"/><origin xyz="0.5 0 0"/></joint>'
        )
        link2_collision = '<collision><origin xyz="0.25 0 0"/><geometry><box size="0.5 0.04 0.04"/></geometry></collision>'
    else:
        tip, link2_collision = "", f'<collision><origin xyz="0.5 0 0"/>{tip_sphere}</collision>'
    return f"""<robot name="arm">{welded}
  <link name="base"><inertial><mass value="2"/>{INERTIA.format(0.01, 0.01)}</inertial>
    <collision>{OBSTACLES[obstacle][0]}</collision></link>
  <link name="link1"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>{INERTIA.format(0.001, 0.004)}</inertial></link>
  <link name="link2"><inertial><origin xyz="0.25 0 0"/><mass value="0.5"/>{INERTIA.format(1.3e-4, 0.0105)}</inertial>
    {link2_collision}</link>{tip}
  <joint name="joint1" type="continuous"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/></joint>
  <joint name="joint2" type="continuous"><parent link="link1"/><child link="link2"/><origin xyz="0.2 0 0"/><axis xyz="0 0 1"/></joint>
</robot>"""


def srdf_disabling(link1: str, link2: str) -> str:
    return f'<robot name="arm"><disable_collisions link1="{link1}" link2="{link2}" reason="Never"/></robot>'


@jax.jit
def run(model, state, torques, params):
    """A jitted rollout (one compilation per model structure, pair table and horizon)."""
    return js.rollout(model, state, torques, params=params)


@jax.jit
def contacts_along(model, states, params):
    """The self-contact forces ``(T, K, 3)`` and penetrations ``(T, K)`` at every state of ``states``."""
    return jax.vmap(self_contacts, in_axes=(None, 0, None))(model, states, params)


def swing(model: js.Model, params: js.SimulationParams, steps: int = 400, velocity: float = 2.0):
    """The arm released at ``q = (0, 0.8)`` with the tip swinging at ``velocity`` [rad/s] towards the obstacle."""
    state = js.State.build(model, joint_positions=[0.0, 0.8], joint_velocities=[0.0, velocity])
    return run(model, state, jnp.zeros((steps, model.dofs)), params)


def tip_centres(model: js.Model, outputs) -> np.ndarray:
    """``(T, 3)``: the centre of the tip's collidable points at each step (a contact position is
    the swept point's centre less its radius along the terrain normal)."""
    tip = np.asarray(model.point_link) == model.link_index("link2")
    radius = np.asarray(model.point_radius)[tip][None, :, None]
    centres = np.asarray(outputs.contact_positions)[:, tip] + radius * np.asarray(outputs.contact_normals)[:, tip]
    return centres.mean(axis=1)


@pytest.fixture(scope="module")
def arm() -> js.Model:
    return js.load_model(arm_urdf("box"))


@pytest.fixture(scope="module")
def free_swing(arm):
    """The swing with self-collisions off (the tip passes through the box)."""
    return swing(arm, js.SimulationParams.build(arm, dt=DT))


# ----- pair table and model building --------------------------------------------------------


def test_pair_table_of_a_known_model():
    """Base box, link1 sphere, link2 box and a tip sphere lumped into link2: parent and child skip
    each other, and an SRDF pair naming the lumped ``tip`` removes the tip's points and shape only."""
    urdf = arm_urdf(lumped_tip=True).replace(
        '<link name="link1"><inertial>', '<link name="link1"><collision><geometry><sphere radius="0.03"/></geometry></collision><inertial>'
    )
    model = js.load_model(urdf)
    assert model.link_names == ("base", "link1", "link2")
    assert model.shape_kind == ("box", "sphere", "box", "sphere")
    assert model.shape_link == (0, 1, 2, 2)
    assert model.shape_source == ("base", "link1", "link2", "tip")
    assert model.point_source == ("base",) * 8 + ("link1",) + ("link2",) * 8 + ("tip",)

    def named(pairs):
        names: dict[tuple[str, str], int] = {}
        for point, shape in pairs:
            key = (model.point_source[point], model.shape_source[shape])
            names[key] = names.get(key, 0) + 1
        return names

    pairs = SelfCollision.build(model).pairs
    assert named(pairs) == {("base", "link2"): 8, ("base", "tip"): 8, ("link2", "base"): 8, ("tip", "base"): 1}
    assert pairs == tuple(sorted(pairs))
    disabled = js.load_model(urdf, srdf=srdf_disabling("tip", "base"))
    assert named(SelfCollision.build(disabled).pairs) == {("base", "link2"): 8, ("link2", "base"): 8}
    explicit = SelfCollision.build(model, srdf=parse_srdf(srdf_disabling("base", "link2"), parse_model(urdf)))
    assert named(explicit.pairs) == {("base", "tip"): 8, ("tip", "base"): 1}
    assert js.SimulationParams.build(disabled, self_collision=True).self_collision.pairs == SelfCollision.build(disabled).pairs
    assert js.SimulationParams.build(model).self_collision is None


def test_shapes_follow_lumping_and_reduce():
    """A lumped shape is re-expressed in its body like the points; ``reduce`` carries shapes and sources."""
    model = js.load_model(arm_urdf("capsule", lumped_tip=True))
    transforms = np.asarray(model.shape_transform)
    np.testing.assert_allclose(transforms[1][:3, 3], [0.25, 0.0, 0.0], atol=1e-15)
    tip = np.eye(4)
    tip[0, 3] = 0.5
    np.testing.assert_allclose(transforms[2], tip, atol=1e-15)
    np.testing.assert_allclose(np.asarray(model.shape_size), [[0.05, 0.1, 0.0], [0.25, 0.02, 0.02], [TIP_RADIUS, 0.0, 0.0]])
    assert model.shape_kind == ("capsule", "box", "sphere")

    angle = 0.3
    reduced = js.reduce(model, ["joint1"], {"joint2": angle})
    assert reduced.link_names == ("base", "link1")
    assert reduced.shape_link == (0, 1, 1) and reduced.shape_source == model.shape_source
    assert reduced.point_source == model.point_source
    c, s = np.cos(angle), np.sin(angle)
    expected_tip = np.array([0.2 + 0.5 * c, 0.5 * s, 0.0])
    np.testing.assert_allclose(np.asarray(reduced.shape_transform)[2][:3, 3], expected_tip, atol=1e-12)
    np.testing.assert_allclose(np.asarray(reduced.shape_transform)[2][:2, :2], [[c, -s], [s, c]], atol=1e-12)
    assert SelfCollision.build(reduced).pairs == ()  # base and link1 are parent and child


# ----- geometry -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shapes_model() -> js.Model:
    """A base with a sphere (r 0.1 at x = 1), a capsule (r 0.1, half length 0.2, along world y,
    at x = 2) and a rotated box (half extents 0.1, 0.2, 0.3, yaw 90 degrees, at x = 3)."""
    urdf = f"""<robot name="shapes"><link name="base"><inertial><mass value="1"/>{INERTIA.format(0.01, 0.01)}</inertial>
      <collision><origin xyz="1 0 0"/><geometry><sphere radius="0.1"/></geometry></collision>
      <collision><origin xyz="2 0 0" rpy="1.5707963267948966 0 0"/><geometry><capsule radius="0.1" length="0.4"/></geometry></collision>
      <collision><origin xyz="3 0 0" rpy="0 0 1.5707963267948966"/><geometry><box size="0.2 0.4 0.6"/></geometry></collision>
    </link></robot>"""
    return js.load_model(urdf)


GEOMETRY_CASES = [  # shape, world point, expected depth, expected outward normal
    (0, [1.05, 0.0, 0.0], 0.05, [1.0, 0.0, 0.0]),
    (0, [1.0, 0.0, -0.08], 0.02, [0.0, 0.0, -1.0]),
    (0, [1.2, 0.0, 0.0], -0.1, [1.0, 0.0, 0.0]),
    (0, [1.0, 0.0, 0.0], 0.1, [1.0, 0.0, 0.0]),  # the centre: the conventional normal (+x of the shape)
    (1, [2.0, 0.15, 0.03], 0.07, [0.0, 0.0, 1.0]),  # beside the segment
    (1, [2.0, -0.25, 0.0], 0.05, [0.0, -1.0, 0.0]),  # in the end cap
    (2, [3.0, 0.05, 0.27], 0.03, [0.0, 0.0, 1.0]),  # box axes: its x is world y
    (2, [3.17, 0.0, 0.0], 0.03, [1.0, 0.0, 0.0]),
    (2, [3.0, -0.08, 0.0], 0.02, [0.0, -1.0, 0.0]),
]


def test_penetration_and_normals(shapes_model):
    pairs = SelfCollision(slip_velocity=jnp.asarray(0.01), point=tuple(range(len(GEOMETRY_CASES))), shape=tuple(c[0] for c in GEOMETRY_CASES))
    points = jnp.asarray([c[1] for c in GEOMETRY_CASES])
    W_H_L = jnp.eye(4)[None]
    for radius in (0.0, 0.01):  # a swept point is its radius deeper, along the same normal
        model = shapes_model.replace(point_radius=jnp.full(len(GEOMETRY_CASES), radius))
        depth, normal = jax.jit(self_collision.penetration)(model, pairs, W_H_L, points)
        np.testing.assert_allclose(np.asarray(depth), [c[2] + radius for c in GEOMETRY_CASES], atol=1e-12)
        np.testing.assert_allclose(np.asarray(normal), [c[3] for c in GEOMETRY_CASES], atol=1e-12)


def test_forces_are_finite_with_finite_gradients_at_the_centre_and_the_boundary(shapes_model):
    """A point at a sphere's centre, on a capsule's segment, exactly on a surface, and touching at zero
    relative velocity: forces and their gradients with respect to the points are finite."""
    pairs = SelfCollision(slip_velocity=jnp.asarray(0.01), point=(0, 1, 2, 3), shape=(0, 1, 0, 2))
    points = jnp.asarray([[1.0, 0.0, 0.0], [2.0, 0.1, 0.0], [1.1, 0.0, 0.0], [3.0, 0.0, 0.0]])
    contact = js.ContactParams.build(1e4, 100.0)

    def total(points, velocities):
        wrenches, forces, _ = self_collision.link_wrenches(
            shapes_model.replace(point_link=(0,) * 4), pairs, contact, jnp.eye(4)[None], jnp.zeros((1, 6)), points, velocities
        )
        return jnp.sum(forces**2) + jnp.sum(wrenches)

    value_and_grad = jax.jit(jax.value_and_grad(total, argnums=(0, 1)))
    for velocities in (jnp.zeros((4, 3)), jnp.ones((4, 3))):
        value, gradients = value_and_grad(points, velocities)
        assert np.isfinite(float(value))
        for g in gradients:
            assert np.isfinite(np.asarray(g)).all()


def test_friction_is_bounded_by_coulomb_and_opposes_slip():
    contact = js.ContactParams.build(1e4, 100.0, friction=0.4)
    depth = jnp.full(3, 0.01)
    normal = jnp.tile(jnp.array([0.0, 0.0, 1.0]), (3, 1))
    velocity = jnp.array([[0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [10.0, 0.0, 0.0]])
    forces = np.asarray(self_collision.contact_forces(contact, jnp.asarray(0.01), depth, normal, velocity))
    f_n = 1e4 * 0.01**1.5
    np.testing.assert_allclose(forces[:, 2], f_n, rtol=1e-12)
    np.testing.assert_allclose(forces[:, 0], [0.0, -0.4 * f_n / np.sqrt(2), -0.4 * f_n * 10 / np.hypot(10, 0.01)], rtol=1e-12)


# ----- physics ------------------------------------------------------------------------------


@pytest.mark.parametrize("obstacle", list(OBSTACLES))
def test_a_swinging_link_is_stopped_by_the_base(obstacle, arm, free_swing, figures):
    """Off, the tip passes within 1 cm of the obstacle's centre; on, it stays out of the obstacle
    (a few mm of penetration), and at the end it is not pushing in (under 2 mm deep: it left,
    rests against the obstacle or slides along it; the contacts are nearly inelastic)."""
    model = arm if obstacle == "box" else js.load_model(arm_urdf(obstacle))
    _, (_, free_outputs) = free_swing
    assert np.linalg.norm(tip_centres(arm, free_outputs) - OBSTACLE_CENTRE, axis=1).min() < 0.01
    params = js.SimulationParams.build(model, dt=DT, self_collision=True)
    _, (states, outputs) = swing(model, params)
    distance = np.linalg.norm(tip_centres(model, outputs) - OBSTACLE_CENTRE, axis=1)
    depth = np.asarray(contacts_along(model, states, params)[1]).max(axis=1)
    figures(f"self-collision {obstacle}: deepest penetration", depth.max(), "m")
    assert 0 < depth.max() < 0.005
    assert distance.min() > OBSTACLES[obstacle][1] + TIP_RADIUS - 0.005
    assert depth[-1] < 0.002
    assert np.isfinite(np.asarray(states.joint_positions)).all()


def test_an_srdf_disabled_pair_passes_through(free_swing):
    model = js.load_model(arm_urdf("box"), srdf=srdf_disabling("link2", "base"))
    params = js.SimulationParams.build(model, dt=DT, self_collision=True)
    assert params.self_collision.pairs == ()
    _, (states, _) = swing(model, params)
    np.testing.assert_allclose(np.asarray(states.joint_positions), np.asarray(free_swing[1][0].joint_positions), rtol=0, atol=1e-12)


@jax.jit
def momentum_and_self_wrenches(model, params, states, index):
    """The centroidal momentum ``(T, 6)`` of every state, and the self-contact link wrenches
    ``(N, 6)`` at state ``index`` (world axes, about the internal frame's origin)."""
    momentum = jax.vmap(centroidal_momentum, in_axes=(None, 0))(model, states)
    kin = kin_module.kinematics(model, jax.tree.map(lambda x: x[index], states))
    W_H_point, W_v_point = kin.G_H_L[np.asarray(model.point_link)], kin.G_v[np.asarray(model.point_link)]
    points = (W_H_point[:, :3, :3] @ model.collidable_points[:, :, None])[:, :, 0] + W_H_point[:, :3, 3]
    velocities = W_v_point[:, :3] + jnp.cross(W_v_point[:, 3:], points)
    wrenches, _, _ = self_collision.link_wrenches(
        model, params.self_collision, params.contact, kin.G_H_L, kin.G_v, points, velocities
    )
    return momentum, wrenches


def test_momentum_is_conserved_through_a_self_collision(figures):
    """A floating arm in zero gravity: the self-contact wrenches sum to zero, and the total linear
    and angular momentum (RK4 at 0.25 ms) stay constant through the collision, to the step's
    error, while the links exchange momentum (1.6e-6 of the impulse with the tip's sphere one
    swept point; 5.8e-7 when it was 12 sampled points sharing the impact)."""
    model = js.load_model(arm_urdf("box", fixed=False))
    dt = DT / 4
    params = js.SimulationParams.build(model, dt=dt, gravity=(0.0, 0.0, 0.0), integrator="rk4", self_collision=True)
    state = js.State.build(model, base_position=[0.0, 0.0, 1.0], joint_positions=[0.0, 0.8], joint_velocities=[0.0, 2.0])
    _, (states, _) = run(model, state, jnp.zeros((600, model.dofs)), params)
    forces, penetration = (np.asarray(x) for x in contacts_along(model, states, params))
    impulse = np.linalg.norm(forces.sum(axis=(0, 1))) * dt
    figures("self-collision momentum: impulse on the tip", impulse, "N s")
    assert impulse > 0.01  # the links exchanged momentum

    deepest = int(np.argmax(penetration.max(axis=1)))
    momentum, wrenches = (np.asarray(x) for x in momentum_and_self_wrenches(model, params, states, deepest))
    assert np.flatnonzero(penetration.max(axis=1) > 0)[0] > 100
    drift = np.abs(momentum - momentum[0]).max()  # the first step is long before the contact
    figures("self-collision momentum: max |h - h0| / impulse", drift / impulse)
    assert drift < 2e-6 * impulse

    scale = np.abs(wrenches).max()
    assert scale > 0.1
    net = np.abs(wrenches.sum(axis=0)).max() / scale
    figures("self-collision momentum: |sum of link wrenches| / max wrench", net)
    assert net < 1e-13


SLIDER = f"""<robot name="slider">
  <link name="world"/><joint name="weld" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 1"/></joint>
  <link name="base"><inertial><mass value="1"/>{INERTIA.format(0.01, 0.01)}</inertial>
    <collision><origin xyz="1 0.05 0"/><geometry><sphere radius="0.1"/></geometry></collision></link>
  <link name="link1"><inertial><mass value="1"/>{INERTIA.format(0.001, 0.001)}</inertial></link>
  <link name="link2"><inertial><mass value="1"/>{INERTIA.format(0.001, 0.001)}</inertial></link>
  <joint name="joint1" type="prismatic"><parent link="base"/><child link="link1"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="100" velocity="10"/></joint>
  <joint name="joint2" type="prismatic"><parent link="link1"/><child link="link2"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="100" velocity="10"/></joint>
</robot>"""


def test_a_point_pressed_into_a_sphere_rests_with_the_predicted_force(figures):
    """``link2``'s one point, at its origin, slides along x (5 cm beside the centre of the base's
    sphere of radius 0.1) under ``F = 5 N`` on both joints. At rest, the contact force balances
    ``F`` along x and lies along the sphere's normal: ``K d^(1+p) (sqrt((r - d)^2 - h^2) / (r - d)) = F``,
    with ``K`` the self-contacts' share of the law (:data:`self_collision.SHARE`)."""
    model = build_model(
        parse_model(SLIDER), collidable_points=lambda link: np.zeros((1 if link.name == "link2" else 0, 3))
    )
    params = js.SimulationParams.build(model, dt=DT, self_collision=True)
    assert params.self_collision.pairs == ((0, 0),)
    F, r, h = 5.0, 0.1, 0.05
    state = js.State.build(model, joint_positions=[0.4, 0.4])
    final, (states, _) = run(model, state, jnp.full((3000, 2), F), params)
    assert np.abs(np.asarray(final.joint_velocities)).max() < 1e-9

    K, p = float(params.contact.stiffness) / self_collision.SHARE, float(params.contact.p)
    low, high = 0.0, 0.04
    for _ in range(100):  # bisection on the depth of the balance above
        d = 0.5 * (low + high)
        low, high = (d, high) if K * d ** (1 + p) * np.sqrt((r - d) ** 2 - h**2) / (r - d) < F else (low, d)
    forces, penetration = contacts_along(model, states, params)
    force, depth = np.asarray(forces[-1, 0]), float(penetration[-1, 0])
    figures("self-collision at rest: depth / predicted - 1", depth / d - 1)
    assert depth == pytest.approx(d, rel=1e-9)
    np.testing.assert_allclose(np.linalg.norm(force), K * d ** (1 + p), rtol=1e-9)
    np.testing.assert_allclose(force[0], -F, rtol=1e-9)
    point = np.array([float(final.joint_positions.sum()), 0.0])
    normal = (point - [1.0, h]) / np.linalg.norm(point - [1.0, h])
    np.testing.assert_allclose(force[:2] / np.linalg.norm(force), normal, atol=1e-9)
    assert abs(force[2]) < 1e-12


def test_gradient_of_a_rollout_through_a_self_contact(arm, figures):
    """d/d(initial joint velocities, stiffness, slip velocity) of a smooth loss of the swing through
    the tip's impact on the box, against Richardson-extrapolated central differences."""
    params = js.SimulationParams.build(arm, dt=DT, self_collision=True)
    state = js.State.build(arm, joint_positions=[0.0, 0.8])

    def loss(velocities, stiffness, slip):
        changed = params.replace(
            contact=params.contact.replace(stiffness=stiffness), self_collision=params.self_collision.replace(slip_velocity=slip)
        )
        final, _ = run(arm, state.replace(joint_velocities=velocities), jnp.zeros((400, 2)), changed)
        return jnp.sum(jnp.sin(final.joint_positions)) + 0.1 * jnp.sum(final.joint_velocities)

    inputs = (jnp.array([0.0, 2.0]), params.contact.stiffness, params.self_collision.slip_velocity)
    grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(*inputs)

    def central(index: int, direction, step: float) -> float:
        """The central difference of the loss along ``direction`` of input ``index`` (an absolute step)."""
        values = []
        for sign in (1, -1):
            changed = list(inputs)
            changed[index] = inputs[index] + sign * step * jnp.asarray(direction)
            values.append(float(loss(*changed)))
        return (values[0] - values[1]) / (2 * step)

    errors = []
    for index, direction in ((0, np.array([0.3, 1.0])), (1, float(inputs[1])), (2, float(inputs[2]))):
        analytic = float(np.sum(np.asarray(grads[index]) * direction))  # relative steps for the scalars
        assert np.isfinite(analytic)
        coarse, fine = central(index, direction, 1e-6), central(index, direction, 5e-7)
        numeric = (4 * fine - coarse) / 3
        errors.append(abs(analytic - numeric) / max(abs(numeric), 1e-6))
    figures("self-collision gradient: max relative error vs finite differences", max(errors))
    assert max(errors) < 1e-5


def test_traced_values_do_not_recompile_and_vmap(arm, free_swing):
    """Changing the contact law or the slip velocity reuses the compiled rollout; a vmapped batch of
    swings equals the single runs."""
    params = js.SimulationParams.build(arm, dt=DT, self_collision=True)
    swing(arm, params)
    size = run._cache_size()
    softer = params.replace(
        contact=params.contact.replace(stiffness=0.5 * params.contact.stiffness),
        self_collision=params.self_collision.replace(slip_velocity=jnp.asarray(0.02)),
    )
    swing(arm, softer)
    assert run._cache_size() == size

    velocities = jnp.array([1.5, 2.0])
    states = jax.vmap(lambda w: js.State.build(arm, joint_positions=[0.0, 0.8], joint_velocities=jnp.stack([0.0, w])))(velocities)
    batched = jax.jit(jax.vmap(lambda s: js.rollout(arm, s, jnp.zeros((400, 2)), params=params)[0].joint_positions))(states)
    single = swing(arm, params, velocity=2.0)[0].joint_positions
    np.testing.assert_allclose(np.asarray(batched[1]), np.asarray(single), rtol=1e-9, atol=1e-12)


def test_off_adds_no_operations(arm):
    """With self-collisions off, the step of a model with shapes has exactly the operations of the
    same model without shapes; :func:`self_contacts` says that they are off."""
    params = js.SimulationParams.build(arm, dt=DT)
    bare = arm.replace(
        shape_transform=jnp.zeros((0, 4, 4)), shape_size=jnp.zeros((0, 3)), shape_link=(), shape_kind=(), shape_source=()
    )
    state = js.State.build(arm)

    def equations(model):
        return [str(e.primitive) for e in jax.make_jaxpr(lambda s: js.step(model, s, params=params))(state).eqns]

    assert equations(arm) == equations(bare)
    with pytest.raises(ValueError, match="self-collisions are off"):
        self_contacts(arm, state, params)
