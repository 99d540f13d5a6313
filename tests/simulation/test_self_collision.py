"""Self-collisions (the world's collision table and pair law, taken by the step of one model):
the pair table, the geometry, and the physics of links hitting and resting on each other.

The models are small URDFs written here. The arm is a fixed (or floating) base carrying an
obstacle (box, sphere or capsule) 0.5 m from the second joint, a short first link and a 0.5 m
second link with a sphere of radius 2 cm at its tip (12 collidable points): joint axes are vertical, so
gravity does not move it, and the tip swings into the obstacle of the base (the grandparent of
its link: not adjacent). The slider presses one point into a sphere of its base along a line.
The ramp is a tilted box welded to the world carrying a block on two prismatic joints (along
the slope, then along its normal), so that the block rests on the ramp, its grandparent.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics import build_model, centroidal_momentum
from jaxsim_like.monitor import monitored_rollout
from jaxsim_like.optimization import rollout_cost
from jaxsim_like.parsers import parse_model, parse_srdf
from jaxsim_like.simulation.collision.collisions import link_inverse_weights
from jaxsim_like.simulation.collision.kinds import POINTS
from jaxsim_like.simulation.collision.points import KIND_CODES, point_shape
from jaxsim_like.simulation.world import WorldModel, world_rollout

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


def deepest(outputs) -> np.ndarray:
    """``(T,)`` [m]: the deepest active self-contact at each step (0 when none)."""
    contacts = outputs.self_contacts.contacts
    return np.where(np.asarray(contacts.active), np.asarray(contacts.depth), 0.0).max(axis=1)


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


def named_candidates(model: js.Model, params: js.SimulationParams) -> set[tuple[str, str, str]]:
    """``(kind, source, source)`` of every candidate of the self-collision table: the description
    links of its two shapes, or of its point and its shape (points expanded from their chunks)."""
    found = set()
    for group in params.collisions.table.groups:
        if group.kind == POINTS:
            chunks = np.reshape(group.first, (len(group.second), -1))
            found |= {(group.kind, model.point_source[p], model.shape_source[s]) for chunk, s in zip(chunks, group.second) for p in chunk if p >= 0}
        else:
            found |= {(group.kind, model.shape_source[a], model.shape_source[b]) for a, b in zip(group.first, group.second)}
    return found


def test_pair_table_of_a_known_model():
    """Base box, link1 sphere, link2 box and a tip sphere lumped into link2: parent and child skip
    each other (only base and link2 meet, shape to shape: their corners and the tip's point
    sample shapes of their own links that meet completely), and an SRDF pair naming the lumped
    ``tip`` removes the tip's shape only."""
    urdf = arm_urdf(lumped_tip=True).replace(
        '<link name="link1"><inertial>', '<link name="link1"><collision><geometry><sphere radius="0.03"/></geometry></collision><inertial>'
    )
    model = js.load_model(urdf)
    assert model.link_names == ("base", "link1", "link2")
    assert model.shape_kind == ("box", "sphere", "box", "sphere")
    assert model.shape_link == (0, 1, 2, 2)
    assert model.shape_source == ("base", "link1", "link2", "tip")
    assert model.point_source == ("base",) * 8 + ("link1",) + ("link2",) * 8 + ("tip",)

    built = js.SimulationParams.build(model, self_collision=True)
    assert named_candidates(model, built) == {("box-box", "base", "link2"), ("sphere-box", "tip", "base")}
    disabled = js.load_model(urdf, srdf=srdf_disabling("tip", "base"))
    assert named_candidates(disabled, js.SimulationParams.build(disabled, self_collision=True)) == {("box-box", "base", "link2")}
    explicit = js.SimulationParams.build(model, self_collision=True, srdf=parse_srdf(srdf_disabling("base", "link2"), parse_model(urdf)))
    assert named_candidates(model, explicit) == {("sphere-box", "tip", "base")}
    assert js.SimulationParams.build(model).collisions is None


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
    assert js.SimulationParams.build(reduced, self_collision=True).collisions is None  # base and link1 are parent and child


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


@jax.jit
def point_against(points: jax.Array, radius: jax.Array, kinds: jax.Array, transforms: jax.Array, sizes: jax.Array):
    """Depths ``(K,)`` and normals ``(K, 3)`` of the swept points at ``points (K, 3)`` (world; the
    link at the origin) against shapes of ``kinds (K,)`` (codes) at ``transforms (K, 4, 4)`` of
    ``sizes (K, 3)``: the table's point-shape narrow phase."""
    slots = jax.vmap(point_shape, in_axes=(0, None, 0, 0, 0))(points, radius, kinds, transforms, sizes)
    return slots.depth[:, 0], slots.normal[:, 0]


def shape_arrays(model: js.Model, shapes) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The kind codes, transforms and sizes of ``shapes`` of ``model``."""
    shapes = np.asarray(shapes, dtype=int)
    return (jnp.asarray([KIND_CODES[model.shape_kind[s]] for s in shapes]), model.shape_transform[shapes], model.shape_size[shapes])


def test_penetration_and_normals(shapes_model):
    points, shapes = jnp.asarray([c[1] for c in GEOMETRY_CASES]), shape_arrays(shapes_model, [c[0] for c in GEOMETRY_CASES])
    for radius in (0.0, 0.01):  # a swept point is its radius deeper, along the same normal
        depth, normal = point_against(points, jnp.asarray(radius), *shapes)
        np.testing.assert_allclose(np.asarray(depth), [c[2] + radius for c in GEOMETRY_CASES], atol=1e-12)
        np.testing.assert_allclose(np.asarray(normal), [c[3] for c in GEOMETRY_CASES], atol=1e-12)


def test_depth_and_normal_have_finite_gradients_at_the_centre_and_the_boundary(shapes_model):
    """A point at a sphere's centre, on a capsule's segment, exactly on a surface, and at a box's
    centre: depth and normal have finite gradients with respect to the point."""
    points = jnp.asarray([[1.0, 0.0, 0.0], [2.0, 0.1, 0.0], [1.1, 0.0, 0.0], [3.0, 0.0, 0.0]])
    shapes = shape_arrays(shapes_model, [0, 1, 0, 2])

    def total(points):
        depth, normal = point_against(points, jnp.asarray(0.01), *shapes)
        return jnp.sum(depth) + jnp.sum(normal * jnp.array([0.3, 0.5, 0.7]))

    value, gradient = jax.value_and_grad(total)(points)
    assert np.isfinite(float(value)) and np.isfinite(np.asarray(gradient)).all()


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
    depth = deepest(outputs)
    figures(f"self-collision {obstacle}: deepest penetration", depth.max(), "m")
    assert 0 < depth.max() < 0.005
    assert distance.min() > OBSTACLES[obstacle][1] + TIP_RADIUS - 0.005
    assert depth[-1] < 0.002
    assert np.isfinite(np.asarray(states.joint_positions)).all()


def test_an_srdf_disabled_pair_passes_through(free_swing):
    model = js.load_model(arm_urdf("box"), srdf=srdf_disabling("link2", "base"))
    params = js.SimulationParams.build(model, dt=DT, self_collision=True)
    assert params.collisions is None
    _, (states, _) = swing(model, params)
    np.testing.assert_allclose(np.asarray(states.joint_positions), np.asarray(free_swing[1][0].joint_positions), rtol=0, atol=1e-12)


def test_momentum_is_conserved_through_a_self_collision(figures):
    """A floating arm in zero gravity: the total linear and angular momentum (RK4 at 0.25 ms)
    stay constant through the collision, to the step's error, while the links exchange momentum."""
    model = js.load_model(arm_urdf("box", fixed=False))
    dt = DT / 4
    params = js.SimulationParams.build(model, dt=dt, gravity=(0.0, 0.0, 0.0), integrator="rk4", self_collision=True)
    state = js.State.build(model, base_position=[0.0, 0.0, 1.0], joint_positions=[0.0, 0.8], joint_velocities=[0.0, 2.0])
    _, (states, outputs) = run(model, state, jnp.zeros((600, model.dofs)), params)
    pairs = outputs.self_contacts
    forces = np.where(np.asarray(pairs.contacts.active)[..., None], np.asarray(pairs.forces), 0.0)
    impulse = np.linalg.norm(forces.sum(axis=(0, 1))) * dt
    figures("self-collision momentum: impulse on the tip", impulse, "N s")
    assert impulse > 0.01  # the links exchanged momentum
    assert np.flatnonzero(deepest(outputs) > 0)[0] > 100

    momentum = np.asarray(jax.jit(jax.vmap(centroidal_momentum, in_axes=(None, 0)))(model, states))
    drift = np.abs(momentum - momentum[0]).max()  # the first step is long before the contact
    figures("self-collision momentum: max |h - h0| / impulse", drift / impulse)
    assert drift < 2e-6 * impulse


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
    sphere of radius 0.1) under ``F = 5 N`` on both joints, without friction. At rest, the
    contact force balances ``F`` along x and lies along the sphere's normal:
    ``K d^(1+p) (sqrt((r - d)^2 - h^2) / (r - d)) = F``, with ``K`` and ``p`` the pair law's for
    the effective mass at the contact (``1 / w`` of link2, the base welded)."""
    model = build_model(
        parse_model(SLIDER), collidable_points=lambda link: np.zeros((1 if link.name == "link2" else 0, 3))
    )
    params = js.SimulationParams.build(model, dt=DT, friction=0.0, self_collision=True)
    assert [(g.kind, g.candidates) for g in params.collisions.table.groups] == [(POINTS, 1)]
    F, r, h = 5.0, 0.1, 0.05
    state = js.State.build(model, joint_positions=[0.4, 0.4])
    final, (_, outputs) = run(model, state, jnp.full((3000, 2), F), params)
    assert np.abs(np.asarray(final.joint_velocities)).max() < 1e-9

    mass = 1 / link_inverse_weights(model)[model.link_index("link2")]
    law = params.collisions.pair_law.contact_params(jnp.asarray([mass]), jnp.asarray([0.0]))
    K, p = float(law.stiffness[0]), float(law.p[0])
    low, high = 0.0, 0.04
    for _ in range(100):  # bisection on the depth of the balance above
        d = 0.5 * (low + high)
        low, high = (d, high) if K * d ** (1 + p) * np.sqrt((r - d) ** 2 - h**2) / (r - d) < F else (low, d)
    pairs = jax.tree.map(lambda x: np.asarray(x[-1]), outputs.self_contacts)
    (slot,) = np.flatnonzero(pairs.contacts.active)
    force, depth = pairs.forces[slot], float(pairs.contacts.depth[slot])
    assert pairs.contacts.link_a[slot] == model.link_index("link2")  # the point's link; the shape's is b
    figures("self-collision at rest: depth / predicted - 1", depth / d - 1)
    assert depth == pytest.approx(d, rel=1e-9)
    np.testing.assert_allclose(np.linalg.norm(force), K * d ** (1 + p), rtol=1e-9)
    np.testing.assert_allclose(force[0], -F, rtol=1e-9)
    point = np.array([float(final.joint_positions.sum()), 0.0])
    normal = (point - [1.0, h]) / np.linalg.norm(point - [1.0, h])
    np.testing.assert_allclose(force[:2] / np.linalg.norm(force), normal, atol=1e-9)
    assert abs(force[2]) < 1e-12


RAMP_ANGLE = float(np.radians(20.0))
RAMP = f"""<robot name="ramp">
  <link name="world"/><joint name="weld" type="fixed"><parent link="world"/><child link="base"/>
    <origin xyz="0 0 1" rpy="0 {RAMP_ANGLE!r} 0"/></joint>
  <link name="base"><inertial><mass value="10"/>{INERTIA.format(0.1, 0.1)}</inertial>
    <collision><geometry><box size="1 0.4 0.1"/></geometry></collision></link>
  <link name="slider"><inertial><mass value="0.1"/>{INERTIA.format(1e-4, 1e-4)}</inertial></link>
  <link name="block"><inertial><mass value="1"/>{INERTIA.format(1 / 600, 1 / 600)}</inertial>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="along" type="prismatic"><parent link="base"/><child link="slider"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="100" velocity="10"/></joint>
  <joint name="normal" type="prismatic"><parent link="slider"/><child link="block"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="100" velocity="10"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def ramp() -> js.Model:
    return js.load_model(RAMP)


RAMP_DT, RAMP_STEPS = 0.005, 500


@pytest.fixture(scope="module")
def ramp_params(ramp) -> js.SimulationParams:
    """Friction 0.8 at dt 5 ms, self-collisions on."""
    return js.SimulationParams.build(ramp, dt=RAMP_DT, friction=0.8, self_collision=True)


@pytest.fixture(scope="module")
def ramp_rest(ramp, ramp_params):
    """The block released touching the ramp, 2.5 s: ``rollout``'s final state and its per-step
    states and outputs."""
    return run(ramp, js.State.build(ramp), jnp.zeros((RAMP_STEPS, 2)), ramp_params)


def test_a_link_resting_on_another_link_of_its_model_does_not_creep(ramp_rest, figures):
    """The block released touching the ramp (friction 0.8, well inside the cone at 20 degrees)
    settles within 0.5 s and then holds: it moves less than 0.1 mm along the slope over the next
    2 s at dt 5 ms (the contacts keep their tangential deformation: static friction, no creep
    law), resting on its weight along the normal."""
    _, (states, outputs) = ramp_rest
    along = np.asarray(states.joint_positions)[:, 0]
    settled = round(0.5 / RAMP_DT) - 1
    drift = np.abs(along[settled:] - along[settled]).max()
    figures("self-collision block on a 20 degree ramp: drift over 2 s after settling, dt 5 ms", drift, "m")
    assert drift < 1e-4
    assert abs(along[-1]) < 1e-3  # it settled where it was released
    pairs = jax.tree.map(lambda x: np.asarray(x[-1]), outputs.self_contacts)
    normal_force = np.sum(np.where(pairs.contacts.active, np.einsum("ci,ci->c", pairs.forces, pairs.contacts.normal), 0.0))
    np.testing.assert_allclose(abs(normal_force), 9.81 * np.cos(RAMP_ANGLE), rtol=1e-3)


def test_the_step_is_the_world_step_of_the_model_alone(ramp, ramp_rest):
    """``step`` with self-collisions equals ``world_step`` of the one-model world built with
    ``WorldModel.build(self_collision=[True])``, states and tangential memories, after the 500
    steps of the block settling and resting on the ramp (``rollout``'s, shared with the test
    above, against ``world_rollout``)."""
    world = WorldModel.build([ramp], dt=RAMP_DT, friction=0.8, self_collision=[True])
    state = ramp_rest[0]
    rollout = jax.jit(world_rollout, static_argnames="steps")
    world_state = rollout(world, world.initial_state([js.State.build(ramp)]), None, steps=RAMP_STEPS)[0]
    for mine, theirs in zip(jax.tree.leaves(state.replace(pair_deformation=None)), jax.tree.leaves(world_state.states[0])):
        np.testing.assert_allclose(np.asarray(mine), np.asarray(theirs), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(state.pair_deformation), np.asarray(world_state.pair_deformation), rtol=0, atol=1e-12)
    assert np.abs(np.asarray(state.pair_deformation)).max() > 0


def test_gradient_of_a_rollout_through_a_self_contact(arm, figures):
    """d/d(initial joint velocities, contact stiffness, pair law's max_penetration) of a smooth
    loss of the swing through the tip's impact on the box, against Richardson-extrapolated
    central differences. The three directional derivatives are taken in forward mode (one
    program of three JVPs: it compiles in a fraction of reverse mode's time); reverse mode
    through the world's pair contacts is checked in ``test_world_contacts``."""
    params = js.SimulationParams.build(arm, dt=DT, self_collision=True)
    state = js.State.build(arm, joint_positions=[0.0, 0.8])

    def loss(velocities, stiffness, max_penetration):
        collisions = params.collisions.replace(pair_law=params.collisions.pair_law.replace(max_penetration=max_penetration))
        changed = params.replace(contact=params.contact.replace(stiffness=stiffness), collisions=collisions)
        final, _ = run(arm, state.replace(joint_velocities=velocities), jnp.zeros((400, 2)), changed)
        return jnp.sum(jnp.sin(final.joint_positions)) + 0.1 * jnp.sum(final.joint_velocities)

    inputs = (jnp.array([0.0, 2.0]), params.contact.stiffness, params.collisions.pair_law.max_penetration)
    directions = (np.array([0.3, 1.0]), float(inputs[1]), float(inputs[2]))  # relative steps for the scalars
    tangents = (jnp.array([[0.3, 1.0], [0.0, 0.0], [0.0, 0.0]]), inputs[1] * jnp.array([0.0, 1.0, 0.0]), inputs[2] * jnp.array([0.0, 0.0, 1.0]))
    derivatives = jax.jit(jax.vmap(lambda *tangent: jax.jvp(loss, inputs, tangent)[1]))(*tangents)

    def central(index: int, direction, step: float) -> float:
        """The central difference of the loss along ``direction`` of input ``index`` (an absolute step)."""
        values = []
        for sign in (1, -1):
            changed = list(inputs)
            changed[index] = inputs[index] + sign * step * jnp.asarray(direction)
            values.append(float(loss(*changed)))
        return (values[0] - values[1]) / (2 * step)

    errors = []
    for index, direction in enumerate(directions):
        analytic = float(derivatives[index])
        assert np.isfinite(analytic)
        coarse, fine = central(index, direction, 1e-6), central(index, direction, 5e-7)
        numeric = (4 * fine - coarse) / 3
        errors.append(abs(analytic - numeric) / max(abs(numeric), 1e-6))
    figures("self-collision gradient: max relative error vs finite differences", max(errors))
    assert max(errors) < 1e-5


def test_traced_values_do_not_recompile_and_vmap(arm, free_swing):
    """Changing the contact law or the pair law reuses the compiled rollout; a vmapped batch of
    swings equals the single runs."""
    params = js.SimulationParams.build(arm, dt=DT, self_collision=True)
    swing(arm, params)
    size = run._cache_size()
    softer = params.replace(
        contact=params.contact.replace(stiffness=0.5 * params.contact.stiffness),
        collisions=params.collisions.replace(pair_law=params.collisions.pair_law.replace(damping_ratio=jnp.asarray(2.0))),
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
    same model without shapes, and reports no self-contacts."""
    params = js.SimulationParams.build(arm, dt=DT)
    bare = arm.replace(
        shape_transform=jnp.zeros((0, 4, 4)), shape_size=jnp.zeros((0, 3)), shape_link=(), shape_kind=(), shape_source=()
    )
    state = js.State.build(arm)

    def traced(model):
        """The step's operations and its outputs' shapes."""
        jaxpr, shapes = jax.make_jaxpr(lambda s: js.step(model, s, params=params), return_shape=True)(state)
        return [str(e.primitive) for e in jaxpr.eqns], shapes

    (operations, (following, outputs)), (bare_operations, _) = traced(arm), traced(bare)
    assert operations == bare_operations
    assert outputs.self_contacts is None and following.pair_deformation is None


def test_monitored_rollouts_and_rollout_costs_carry_the_pair_memory(ramp, ramp_params, ramp_rest):
    """The scans of :func:`~jaxsim_like.monitor.monitored_rollout` and
    :func:`~jaxsim_like.optimization.rollout_cost` over ``step`` start the self-contacts'
    tangential memory as ``rollout`` does, and end where it ends."""
    params, final = ramp_params, ramp_rest[0]
    state, torques = js.State.build(ramp), jnp.zeros((RAMP_STEPS, 2))
    monitored = monitored_rollout(ramp, state, torques, params=params)[0]
    costed = rollout_cost(ramp, state, torques, params=params, stage_cost=lambda s, o, k: jnp.sum(s.joint_positions**2))[1]
    for other in (monitored, costed):
        for mine, theirs in zip(jax.tree.leaves(other), jax.tree.leaves(final)):
            np.testing.assert_allclose(np.asarray(mine), np.asarray(theirs), rtol=0, atol=1e-12)
    assert np.abs(np.asarray(final.pair_deformation)).max() > 0
