"""A box's edges on a cylinder's cap and rim (issue 29): :func:`box_on_cap` against analytic
contacts, finite in value and gradient where its geometry degenerates, its gradient the central
difference's; and a can standing across two fixed ridges (boxes turned 45 degrees, an edge up)
rests at the pair law's ``max_penetration`` with its weight. Before, no contact saw an edge lying
across a cap between two rim samples: the can sank 9.6 mm onto the ridges (``max_penetration``
0.2 mm), carried by the rim points that the ridges' wedges reached."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.dynamics import spatial
from jaxsim_like.simulation.collision.box_caps import box_on_cap
from jaxsim_like.simulation.world import WorldModel, world_rollout

R, H = 0.03, 0.03  # the can's radius and half length [m]
HALF = np.array([0.05, 0.02, 0.02])  # the box's half extents [m]: its x edges are 10 cm long
SIZE = jnp.asarray([R, H, 0.0])


def _edge_pose(point, edge, outward) -> np.ndarray:
    """The pose ``(4, 4)`` of the box whose edge along its x axis at local ``(., -y, -z)`` passes
    through ``point`` (its middle) along the unit ``edge``, its body on the side of the unit
    ``outward`` (perpendicular to ``edge``), which halves the angle between its two faces there."""
    edge, outward = np.asarray(edge, float), np.asarray(outward, float)
    m = np.cross(edge, outward)
    y, z = (outward - m) / np.sqrt(2), (outward + m) / np.sqrt(2)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([edge, y, z], axis=1)
    pose[:3, 3] = np.asarray(point) + HALF[1] * y + HALF[2] * z
    return pose


def _rotation(vector: jax.Array) -> jax.Array:
    """The rotation matrix of a rotation ``vector (3,)`` (Rodrigues), smooth at zero."""
    angle2 = vector @ vector
    K = jnp.cross(jnp.eye(3), vector)
    small = angle2 < 1e-12
    angle = jnp.sqrt(jnp.where(small, 1.0, angle2))
    a = jnp.where(small, 1.0 - angle2 / 6, jnp.sin(angle) / angle)
    b = jnp.where(small, 0.5 - angle2 / 24, (1 - jnp.cos(angle)) / jnp.where(small, 1.0, angle2))
    return jnp.eye(3) + a * K + b * K @ K


@jax.jit
def _moved(pose: jax.Array, motion: jax.Array):
    """:func:`box_on_cap` of the can at the origin and the box at ``pose`` moved by ``motion (6,)``
    (a translation [m], then a rotation vector about the box's centre, world axes)."""
    H_box = pose.at[:3, :3].set(_rotation(motion[3:]) @ pose[:3, :3]).at[:3, 3].add(motion[:3])
    return box_on_cap(jnp.eye(4), SIZE, H_box, jnp.asarray(HALF))


def _contacts(pose, motion=np.zeros(6)):
    slots = _moved(jnp.asarray(pose), jnp.asarray(motion))
    return tuple(np.asarray(x) for x in slots)


@pytest.mark.parametrize("offset", [0.0, 0.012])
def test_an_edge_across_a_cap_rests_on_the_ends_of_its_chord(offset):
    """The box's edge parallel to the cap, ``d`` below it, at ``offset`` from the axis: two
    contacts at the chord's ends on the rim, ``d`` deep along the axis (the can pushed down)."""
    depth = 2e-4
    position, normal, found, valid, _ = _contacts(_edge_pose([0.0, offset, H - depth], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]))
    assert np.sum(valid) == 2
    half_chord = np.sqrt(R**2 - offset**2)
    np.testing.assert_allclose(np.sort(position[valid, 0]), [-half_chord, half_chord], atol=1e-12)
    np.testing.assert_allclose(position[valid, 1:], [[offset, H - 0.5 * depth]] * 2, atol=1e-12)
    np.testing.assert_allclose(found[valid], depth, atol=1e-12)
    np.testing.assert_allclose(normal[valid], [[0.0, 0.0, -1.0]] * 2, atol=1e-12)


@pytest.mark.parametrize("turn", [0.0, 0.5])
def test_an_edge_across_a_rim_is_as_deep_as_its_distance_to_the_rim(turn):
    """The box's edge cutting ``d`` into the rim at (r, 0, h), perpendicular to the rim's
    tangent there and to the direction ``n`` halving the cap and the side (turned by ``turn``
    about ``n``): one contact, ``d`` deep along ``-n``, midway between the edge and the rim
    (the closest points of the edge and the rim's circle)."""
    depth = 3e-4
    outward = np.array([1.0, 0.0, 1.0]) / np.sqrt(2)
    across = np.array([1.0, 0.0, -1.0]) / np.sqrt(2)
    edge = np.cos(turn) * across + np.sin(turn) * np.array([0.0, 1.0, 0.0])
    rim = np.array([R, 0.0, H])
    position, normal, found, valid, _ = _contacts(_edge_pose(rim - depth * outward, edge, outward))
    deepest = np.argmax(np.where(valid, found, -np.inf))
    assert found[deepest] == pytest.approx(depth, rel=1e-9)
    np.testing.assert_allclose(normal[deepest], -outward, atol=1e-9)
    np.testing.assert_allclose(position[deepest], rim - 0.5 * depth * outward, atol=1e-9)


@pytest.mark.parametrize("height", [0.001, H - 0.005])
def test_a_box_pressed_into_the_side_has_no_contact_with_the_cap(height):
    """A box beside the can, 0.5 mm into its side, its centre at ``height``: its edges cross the
    rim seen along the axis, below the cap, but the box leaves sideways sooner (the side's
    contacts are the capsule's and the points')."""
    pose = np.eye(4)
    pose[:3, 3] = [R + HALF[1] - 5e-4, 0.0, height]
    pose[:3, :3] = [[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]  # the box's long edges along y, its y axis across
    assert not np.any(_contacts(pose)[3])


DEGENERATE = {
    "edge across the axis, parallel to the cap": _edge_pose([0.0, 0.0, H - 1e-4], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
    "edge along the axis": _edge_pose([0.0, 0.0, H + 0.049], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]),
    "edge on the rim's tangent": _edge_pose([0.0, R, H - 1e-4], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
    "face flat on the cap, centred": np.array([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, H + 0.02 - 1e-4], [0, 0, 0, 1]]),
}


@pytest.mark.parametrize("pose", DEGENERATE.values(), ids=DEGENERATE.keys())
def test_the_contacts_and_their_gradients_are_finite_where_the_geometry_degenerates(pose):
    slots = _contacts(pose)
    assert all(np.all(np.isfinite(x)) for x in slots[:3])
    jacobian = jax.jacfwd(lambda m: _moved(jnp.asarray(pose), m)[:3])(jnp.zeros(6))
    assert all(np.all(np.isfinite(np.asarray(x))) for x in jacobian)
    reverse = jax.grad(lambda m: jnp.sum(_moved(jnp.asarray(pose), m)[2]))(jnp.zeros(6))
    assert np.all(np.isfinite(np.asarray(reverse)))


@pytest.mark.parametrize("where", ["rim", "cap"])
def test_the_gradient_of_the_contacts_is_the_central_difference(where):
    """The depths and normals of the contacts of an edge across the rim (turned 0.4 rad from the
    rim's normal plane) and of a tilted edge across the cap (its crossing points move along the
    rim), with respect to the box's translation and rotation."""
    if where == "rim":
        outward = np.array([1.0, 0.0, 1.0]) / np.sqrt(2)
        edge = np.cos(0.4) * np.array([1.0, 0.0, -1.0]) / np.sqrt(2) + np.sin(0.4) * np.array([0.0, 1.0, 0.0])
        pose = _edge_pose(np.array([R, 0.0, H]) - 3e-4 * outward, edge, outward)
    else:
        tilt = 0.05
        pose = _edge_pose([0.0, 0.01, H - 2e-4], [np.cos(tilt), 0.0, -np.sin(tilt)], [np.sin(tilt), 0.0, np.cos(tilt)])
    valid = _contacts(pose)[3]

    def values(motion):
        _, normal, depth, _, _ = _moved(jnp.asarray(pose), motion)
        return jnp.concatenate([depth[valid], normal[valid].reshape(-1)])

    jacobian = np.asarray(jax.jacfwd(values)(jnp.zeros(6)))
    step = 1e-7
    central = np.stack([(np.asarray(values(jnp.asarray(step * e))) - np.asarray(values(jnp.asarray(-step * e)))) / (2 * step)
                        for e in np.eye(6)], axis=1)
    assert np.sum(valid) >= 1 and np.all(_contacts(pose, step * np.ones(6))[3] == valid)
    np.testing.assert_allclose(jacobian, central, rtol=1e-5, atol=1e-6)


MASS, DT, G = 0.2, 0.002, 9.81
TOP = 0.05 + 0.02 * np.sqrt(2)  # the ridges' edges' height [m]


def _ridge(name: str, x: float, y: float, yaw: float):
    """A box 12 x 4 x 4 cm welded to the world, turned 45 degrees about its long axis (an edge up,
    at ``TOP``), its centre at ``(x, y, 0.05)``, the long axis turned by ``yaw`` about z."""
    return js.load_model(f"""<robot name="{name}"><link name="{name}"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"
        ixy="0" ixz="0" iyz="0"/></inertial><collision><origin xyz="{x} {y} 0.05" rpy="{np.pi / 4} 0 {yaw}"/><geometry>
        <box size="0.12 0.04 0.04"/></geometry></collision></link></robot>""", floating_base=False)


RIDGE_YAWS = (0.0, 0.5)  # the second ridge's turn about z [rad]: parallel ridges, and ridges at an angle


@pytest.fixture(scope="module")
def on_ridges():
    """One world, one compiled rollout of 1 s: per ridge yaw, a can (r = 3 cm, L = 6 cm, 0.2 kg)
    standing across two ridges 24 mm apart (chords of its bottom cap): how far it sank [m], the
    deepest contact at the end [m], the ridges' normal force on it over the last 0.25 s [N], and
    the pair law's ``max_penetration``."""
    models, states = [], []
    for i, yaw in enumerate(RIDGE_YAWS):
        x = 0.4 * i
        can = scenes.cylinder(R, 2 * H, mass=MASS, name=f"can{i}")
        ridges = [_ridge(f"ridge{i}a", x, 0.012, 0.0), _ridge(f"ridge{i}b", x + 0.012 * np.sin(yaw), -0.012 * np.cos(yaw), yaw)]
        models += [can, *ridges]
        states += [js.State.build(can, base_position=[x, 0.0, TOP + H])] + [js.State.build(m) for m in ridges]
    world = WorldModel.build(models, dt=DT)
    cans = jnp.asarray([world.collision.link_offsets[m] for m in range(0, len(models), 3)])

    @jax.jit
    def run(state):
        final, outputs = world_rollout(world, state, None, steps=500)
        c, f = outputs.pairs.contacts, outputs.pairs.forces
        on = (c.link_a[:, None] == cans[None, :, None]) & c.active[:, None]
        under = (c.link_b[:, None] == cans[None, :, None]) & c.active[:, None]
        normal = jnp.sum(jnp.where(on, f[:, None, :, 2], 0.0) - jnp.where(under, f[:, None, :, 2], 0.0), axis=-1)
        depth = jnp.max(jnp.where(on | under, c.depth[:, None], 0.0), axis=-1)
        return jnp.stack([TOP + H - final.states[3 * i].base_position[2] for i in range(len(RIDGE_YAWS))]), depth[-1], normal[-125:]

    sank, depth, normal = (np.asarray(x) for x in run(world.initial_state(states, history=0)))
    return sank, depth, normal, float(world.pair_law.max_penetration)


@pytest.mark.parametrize("which", range(len(RIDGE_YAWS)), ids=[f"yaw {yaw}" for yaw in RIDGE_YAWS])
def test_a_can_across_two_ridges_rests_at_max_penetration_with_its_weight(on_ridges, which, figures):
    sank, depth, normal, max_penetration = on_ridges
    figures(f"box on cap: a can across two ridges at yaw {RIDGE_YAWS[which]}, depth / max_penetration", depth[which] / max_penetration)
    assert sank[which] == pytest.approx(max_penetration, rel=0.1)
    assert depth[which] == pytest.approx(max_penetration, rel=0.1)
    np.testing.assert_allclose(normal[:, which], MASS * G, rtol=5e-3)


SLAB = np.array([0.2, 0.2, 0.05])  # the half extents [m] of a box that a thrown can strikes
STRIKES = {  # a can (position, quaternion) thrown spinning onto the slab at rest, its centre at (0, 0, 0.0483)
    # tilted over the slab's edge: the cap that faces the slab's centre turns away from it
    "cap turned away": ([-0.0134376217, 0.1392078769, 0.1283261844], [-0.7840610061, -0.4412339985, -0.0242376549, 0.4358594192]),
    # lying across the slab's edge, its lower cap facing the slab: the edge crosses its rim deep in its side
    "edge through the side": ([0.0914205523, 0.2036521286, 0.1282092496], [-0.7488132759, 0.6227930936, -0.025598285, -0.2252824187]),
    # the same a little later: the edge's point nearest to the rim's circle lies outside the can
    "edge past the rim": ([0.0943973884, 0.2153767041, 0.1198644871], [-0.5663980456, 0.7552300125, -0.1113396396, -0.3105227316]),
}


@pytest.mark.parametrize("can", STRIKES.values(), ids=STRIKES.keys())
def test_no_contact_of_a_slab_on_a_cap_is_deeper_than_the_overlap(can):
    """A can striking a wide slab near its edge: no contact on the cap is deeper than the two
    overlap (MuJoCo's ``mj_collision``, its least signed distance). Before, the edge of the slab's
    top face met the cap turned away from it (81 mm deep where they overlap 12 mm, its normal
    sending the can down through the slab), crossed the rim in the can's side (22 mm deep, 6 mm
    overlap), or the Newton steps to the rim's circle stopped inside the can (18 mm, 5 mm)."""
    position, quaternion = np.asarray(can[0]), np.asarray(can[1])
    H_can = np.eye(4)
    H_can[:3, :3], H_can[:3, 3] = np.asarray(spatial.quaternion_to_rotation(jnp.asarray(quaternion))), position
    H_slab = np.eye(4)
    H_slab[2, 3] = 0.0483
    found = np.asarray(_on_cap(jnp.asarray(H_can), SIZE, jnp.asarray(H_slab), jnp.asarray(SLAB)).depth)
    mj = mujoco.MjModel.from_xml_string(f"""<mujoco><worldbody>
        <body pos="0 0 0.0483"><freejoint/><geom type="box" size="{' '.join(map(str, SLAB))}"/></body>
        <body pos="{' '.join(map(str, position))}" quat="{' '.join(map(str, quaternion))}"><freejoint/><geom type="cylinder" size="{R} {H}"/></body>
        </worldbody></mujoco>""")
    data = mujoco.MjData(mj)
    mujoco.mj_kinematics(mj, data)
    mujoco.mj_collision(mj, data)
    overlap = -min(c.dist for c in data.contact[: data.ncon])
    assert overlap > 0 and np.max(found) <= overlap + 1e-9


_on_cap = jax.jit(box_on_cap)
