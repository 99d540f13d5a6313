"""A cylinder's rims against the terrain and a box (issue 29): its rings of rim points turn towards
the surface they meet (:mod:`jaxsim_like.simulation.rims`), so the rim's deepest point is a sample
whatever the cylinder's roll. Fixed in the body, the samples let a lying cylinder rolled between
two of them rest 3.3 times ``max_penetration`` deep on the ground (1.6 times the pair law's on a
box, on the two contacts of its side only), and a rolling one bump over them. A cylinder r = 3 cm,
L = 6 cm, 0.2 kg, float64, 2 ms: lying at three rolls and standing on a cap, on the ground and on a
10 kg slab, it rests at the law's ``max_penetration`` within 10 % with its weight within 0.5 %;
rolling at 0.5 m/s on the ground, its axis keeps its height and it keeps its speed (no rim
catching; on the terrain the rim's contact does not drift with the cap's centre, as a ball's does
not there, :mod:`test_rolling_contacts`: it rolls 1.33 mm deep, 1.00 at rest), on a slab
it rolls at the pair law's depth, and the gradient of where it rolls to with respect to its speed
is the central difference's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.parsers.shapes import rim_frames, rim_points
from jaxsim_like.simulation import rims
from jaxsim_like.simulation.rims import FLAT
from jaxsim_like.simulation.world import WorldModel, world_rollout

R, L, MASS, DT, G = 0.03, 0.06, 0.2, 0.002, 9.81
MAX_PENETRATION = 0.001
ROLLS = (0.0, np.pi / 16, np.pi / 8)
SPEED = 0.5  # [m/s] of the rolling cylinder's axis


def _lying(roll: float) -> np.ndarray:
    """The wxyz quaternion of the cylinder's axis along world x, turned by ``roll`` about it."""
    half = np.pi / 4
    return np.array([np.cos(half) * np.cos(roll / 2), np.sin(half) * np.sin(roll / 2),
                     np.sin(half) * np.cos(roll / 2), np.cos(half) * np.sin(roll / 2)])


@pytest.fixture(scope="module")
def cylinder(sim):
    """The model, its parameters and the shared compiled rollout (:func:`.conftest.simulate`)."""
    model = scenes.cylinder(R, L, mass=MASS)
    return model, js.SimulationParams.build(model, dt=DT, max_penetration=MAX_PENETRATION), sim


def _rest(simulate, model, params, state, steps=500):
    """The depth of the deepest point and the total normal force at the end of ``steps``."""
    final, _, outputs = simulate(model, state, params, steps=steps)
    depth = float(np.max(np.asarray(outputs.penetration[-1])))
    force = float(np.sum(np.asarray(outputs.contact_forces[-1])[:, 2]))
    return final, depth, force


@pytest.mark.parametrize("roll", ROLLS)
def test_a_lying_cylinder_rests_at_max_penetration_whatever_its_roll(cylinder, roll, figures):
    model, params, simulate = cylinder
    state = js.State.build(model, base_position=[0.0, 0.0, R], base_quaternion=_lying(roll))
    final, depth, force = _rest(simulate, model, params, state)
    figures(f"cylinder rims: lying at roll {roll:.3f} on the ground, depth / max_penetration", depth / MAX_PENETRATION)
    assert R - float(final.base_position[2]) == pytest.approx(MAX_PENETRATION, rel=0.1)
    assert depth == pytest.approx(MAX_PENETRATION, rel=0.1)
    assert force == pytest.approx(MASS * G, rel=5e-3)
    assert np.max(np.abs(np.asarray(final.base_velocity))) < 1e-6


def test_a_standing_cylinder_rests_on_its_cap_at_max_penetration(cylinder, figures):
    model, params, simulate = cylinder
    state = js.State.build(model, base_position=[0.0, 0.0, 0.5 * L])
    final, depth, force = _rest(simulate, model, params, state)
    figures("cylinder rims: standing on the ground, depth / max_penetration", depth / MAX_PENETRATION)
    assert 0.5 * L - float(final.base_position[2]) == pytest.approx(MAX_PENETRATION, rel=0.1)
    assert depth == pytest.approx(MAX_PENETRATION, rel=0.1)
    assert force == pytest.approx(MASS * G, rel=5e-3)


def _rolling(model, speed: float, roll: float = np.pi / 16) -> js.State:
    """The cylinder lying at ``roll``, at its resting height, rolling along y at ``speed`` [m/s]."""
    return js.State.build(model, base_position=[0.0, 0.0, R - MAX_PENETRATION], base_quaternion=_lying(roll),
                          base_velocity=[0.0, speed, 0.0, -speed / R, 0.0, 0.0])


def test_a_rolling_cylinder_keeps_its_height_and_its_speed(cylinder, figures):
    model, params, simulate = cylinder
    _, states, _ = simulate(model, _rolling(model, SPEED), params, steps=500)
    height = np.asarray(states.base_position[100:, 2])
    speed = np.asarray(states.base_velocity[:, 1])
    figures("cylinder rims: rolling at 0.5 m/s, axis height peak to peak", float(np.ptp(height)), "m")
    figures("cylinder rims: rolling at 0.5 m/s, speed after 1 s", float(speed[-1]), "m/s")
    # Fixed samples 45 degrees apart lift the axis by up to r (1 - cos 22.5 deg), 2.3 mm, per sample.
    assert np.ptp(height) < 0.05 * MAX_PENETRATION
    assert speed[-1] == pytest.approx(SPEED, rel=0.02)
    assert np.all(np.diff(speed[100:]) <= 1e-9)  # friction only slows it, never a catch and release


def test_the_gradient_through_a_rolling_cylinder_is_the_central_difference(cylinder):
    model, params, simulate = cylinder
    steps = 100

    def travelled(speed):
        final, _, _ = simulate(model, _rolling(model, speed), params, steps=steps)
        return final.base_position[1] + 0.1 * final.base_position[2]

    speed, h = 0.5, 1e-6
    gradient = float(jax.grad(travelled)(jnp.asarray(speed)))
    central = float((travelled(speed + h) - travelled(speed - h)) / (2 * h))
    assert np.isfinite(gradient)
    assert gradient == pytest.approx(central, rel=1e-5, abs=1e-9)


SLAB_SPEEDS = (1.0, 2.0)  # [m/s] of the cylinders rolling along a long slab


@pytest.fixture(scope="module")
def on_slab():
    """One world, one compiled rollout of 1.5 s: per roll (then standing on a cap), the deepest
    contact between the cylinder and a slab at the end [m] and the slab's normal force on it over
    the last 0.25 s ``(K,)`` [N]; per speed of :data:`SLAB_SPEEDS`, a lying cylinder's mean deepest
    contact with a long slab over the last half [m] and its speed at the end [m/s]; the pair law's
    ``max_penetration`` [m]."""
    models, states = [], []
    for i, roll in enumerate((*ROLLS, None)):
        slab, top = scenes.box((0.4, 0.4, 0.1), mass=10.0, name=f"slab{i}"), scenes.cylinder(R, L, mass=MASS, name=f"top{i}")
        turned = {} if roll is None else {"base_quaternion": _lying(roll)}
        models += [slab, top]
        states += [js.State.build(slab, base_position=[0.6 * i, 0.0, 0.0491]),
                   js.State.build(top, base_position=[0.6 * i, 0.0, 0.1 + (0.5 * L if roll is None else R)], **turned)]
    for i, speed in enumerate(SLAB_SPEEDS):  # along y, on a slab 4 m long
        slab, top = scenes.box((0.3, 4.0, 0.1), mass=20.0, name=f"long{i}"), scenes.cylinder(R, L, mass=MASS, name=f"rolling{i}")
        models += [slab, top]
        states += [js.State.build(slab, base_position=[-1.0 - 0.6 * i, 0.0, 0.0491]),
                   js.State.build(top, base_position=[-1.0 - 0.6 * i, -1.8, 0.1 + R - 0.0002], base_quaternion=_lying(np.pi / 16),
                                  base_velocity=[0.0, speed, 0.0, -speed / R, 0.0, 0.0])]
    world = WorldModel.build(models, dt=DT)
    steps, kept = 750, 125
    tops = jnp.asarray([world.collision.link_offsets[m] for m in range(1, len(models), 2)])

    @jax.jit
    def run(state):
        final, outputs = world_rollout(world, state, None, steps=steps)
        contacts, forces = outputs.pairs.contacts, outputs.pairs.forces
        on = (contacts.link_a[:, None] == tops[None, :, None]) & contacts.active[:, None]
        under = (contacts.link_b[:, None] == tops[None, :, None]) & contacts.active[:, None]
        normal = jnp.sum(jnp.where(on, forces[:, None, :, 2], 0.0) - jnp.where(under, forces[:, None, :, 2], 0.0), axis=-1)
        depth = jnp.max(jnp.where(on | under, contacts.depth[:, None], 0.0), axis=-1)
        return depth, normal[-kept:], jnp.stack([final.states[m].base_velocity[1] for m in range(len(models) - 2 * len(SLAB_SPEEDS) + 1, len(models), 2)])

    depth, normal, speed = (np.asarray(x) for x in run(world.initial_state(states, history=0)))
    resting = len(ROLLS) + 1
    return depth[-1, :resting], normal[:, :resting], np.mean(depth[steps // 2 :, resting:], axis=0), speed, float(world.pair_law.max_penetration)


@pytest.mark.parametrize("which", range(len(ROLLS) + 1), ids=[f"roll {roll:.3f}" for roll in ROLLS] + ["standing"])
def test_a_cylinder_rests_on_a_box_at_the_pair_depth_whatever_its_roll(on_slab, which, figures):
    depth, normal, _, _, max_penetration = on_slab
    figures(f"cylinder rims: {'standing' if which == len(ROLLS) else f'lying at roll {ROLLS[which]:.3f}'} on a slab, "
            "depth / max_penetration", depth[which] / max_penetration)
    assert depth[which] == pytest.approx(max_penetration, rel=0.1)
    np.testing.assert_allclose(normal[:, which], MASS * G, rtol=5e-3)


def test_a_cylinder_rolling_on_a_box_presses_as_at_rest_and_keeps_its_speed(on_slab, figures):
    """Its rim's contact drifts with the cap's centre (:func:`jaxsim_like.simulation.contacts.round_drift`),
    as a capsule's does: without it, the linearised law sees the rim point's centripetal
    acceleration, and the cylinder sank 2.1 and 6.3 times as deep at 1 and 2 m/s."""
    _, _, rolling, speed, max_penetration = on_slab
    for v, depth, end in zip(SLAB_SPEEDS, rolling, speed):
        figures(f"cylinder rims: rolling at {v:g} m/s on a slab, depth / max_penetration", depth / max_penetration)
        figures(f"cylinder rims: rolling at {v:g} m/s on a slab, speed after 1.5 s", end, "m/s")
        assert depth == pytest.approx(max_penetration, rel=0.05)
        assert end == pytest.approx(v, rel=0.02)


def test_rings_turn_to_the_deepest_rim_point_and_stay_finite_where_the_cap_is_flat():
    """:func:`rims.turned` of one ring of 4 (axis z, first point on x, r = 3 cm): under a normal
    tilted towards -y the first point moves to -y r, the ring stays a square on the rim; under a
    normal along the axis (a flat cap) and where the blend cancels, the ring stays as sampled,
    and the gradient with respect to the normal is finite everywhere; a point on no rim never moves."""
    ring = rim_points(R, L, 4)[:4]
    frames = rim_frames(np.concatenate([ring, [[0.01, 0.02, 0.0]]]), np.zeros(5), [(np.eye(4), R, 0.5 * L)])
    assert np.all(frames[4] == 0) and np.allclose(frames[:4, :3], [0.0, 0.0, 0.5 * L])
    ring_rim, point_ring = jnp.asarray(np.concatenate([np.zeros((1, 9)), frames[:1]])), jnp.asarray([1, 1, 1, 1, 0])
    rings = rims.Rings.placed(ring_rim, jnp.broadcast_to(jnp.eye(4), (2, 4, 4)))
    points = jnp.concatenate([jnp.asarray(ring), jnp.asarray([[0.01, 0.02, 0.0]])])
    at = rims.coordinates(points, ring_rim, point_ring)

    def turned(normal):
        return rims.turned(points, at, rings.turns(jnp.broadcast_to(normal, (2, 3)))[point_ring])

    tilted = np.asarray(turned(jnp.asarray([0.0, np.sin(0.3), np.cos(0.3)])))
    np.testing.assert_allclose(tilted[0], [0.0, -R, 0.5 * L], atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(tilted[:4] - tilted[[1, 2, 3, 0]], axis=1), R * np.sqrt(2), rtol=1e-12)
    np.testing.assert_allclose(tilted[4], points[4], atol=0)
    # The blend cancels where the in-plane part s along +x has s^2 / FLAT = FLAT (1 - s / FLAT)^2.
    cancelling = 0.5 * FLAT
    for normal in ([0.0, 0.0, 1.0], [0.5 * FLAT, 0.0, 1.0], [cancelling, 0.0, np.sqrt(1 - cancelling**2)]):
        normal = jnp.asarray(normal) / np.linalg.norm(normal)
        assert np.all(np.isfinite(turned(normal)))
        gradient = jax.jacobian(turned)(normal)
        assert np.all(np.isfinite(gradient))
    np.testing.assert_allclose(turned(jnp.asarray([0.0, 0.0, 1.0])), points, atol=1e-15)


def _rot_y(angle: float) -> np.ndarray:
    return np.array([[np.cos(angle), 0.0, np.sin(angle)], [0.0, 1.0, 0.0], [-np.sin(angle), 0.0, np.cos(angle)]])


def _axes(z, x) -> np.ndarray:
    """The rotation whose z axis is along ``z`` and whose x axis is ``x`` made orthogonal to it."""
    z = np.asarray(z, float) / np.linalg.norm(z)
    x = np.asarray(x, float) - z * (np.dot(x, z))
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z], axis=1)


@pytest.fixture(scope="module")
def can_and_cube():
    """A can r = 3 cm, L = 6 cm and a 6 cm cube (the 125-body pile's), their table, and a compiled
    :func:`collide` of the two at poses ``(R_can, p_can, R_cube, p_cube)``: the point-shape slots'
    ``(active, depth, normal, position)``."""
    from jaxsim_like.simulation.collision import CollisionTable, collide

    can, cube = scenes.cylinder(R, L, mass=MASS, name="can"), scenes.box((0.06, 0.06, 0.06), mass=MASS, name="cube")
    table = CollisionTable.build([can, cube])
    ends = np.cumsum([group.slots for group in table.groups])
    points = [slice(end - group.slots, end) for group, end in zip(table.groups, ends) if group.kind == "point-shape"][0]

    def pose(R_, p):
        return jnp.concatenate([jnp.concatenate([R_, p[:, None]], axis=1), jnp.asarray([[0.0, 0.0, 0.0, 1.0]])])[None]

    @jax.jit
    def contacts(R_can, p_can, R_cube, p_cube):
        c = collide(table, [can, cube], [pose(R_can, p_can), pose(R_cube, p_cube)])
        return c.active[points], c.depth[points], c.normal[points], c.position[points]

    return lambda *poses: tuple(np.asarray(x) for x in contacts(*(jnp.asarray(x) for x in poses)))


@pytest.mark.parametrize("tilt", (0.02, 0.1))
def test_a_ring_inside_a_cube_of_its_cap_s_size_leaves_by_the_face_it_presses(can_and_cube, tilt):
    """A cube the can's cap's size, 1 mm into the cap at its centre and tilted about y: every rim
    point inside it is pushed out of its bottom face, as deep as it lies past that face (the
    deepest, the ring's first point, ``1 mm + r sin(tilt)``). On ``main`` the rim point at the
    cube's side met the side (depth 0.03 mm along +x at a tilt of 0.02): the sides' opposite
    pushes held nothing, and a cube tilted on a can sank onto its cap."""
    R_cube = _rot_y(tilt)
    bottom = np.array([0.0, 0.0, 0.5 * L - MAX_PENETRATION])
    p_cube = bottom + R_cube @ np.array([0.0, 0.0, 0.03])
    active, depth, normal, position = can_and_cube(np.eye(3), np.zeros(3), R_cube, p_cube)
    assert np.sum(active) >= 3
    np.testing.assert_allclose(normal[active], np.broadcast_to(-R_cube[:, 2], normal[active].shape), atol=1e-12)
    # Each point lies half its depth below the slot's position, its depth past the bottom face.
    inner = position[active] - 0.5 * depth[active, None] * normal[active]
    np.testing.assert_allclose(depth[active], (inner - (p_cube - 0.03 * R_cube[:, 2])) @ R_cube[:, 2], atol=1e-12)
    deepest = np.dot(np.array([0.0, 0.0, 0.5 * L]) - (p_cube - 0.03 * R_cube[:, 2]), R_cube[:, 2]) + R * np.sin(tilt)
    assert np.max(depth) == pytest.approx(deepest, rel=1e-9)


def test_a_cube_s_edge_cutting_into_a_rim_is_no_deeper_than_the_rim_in_it(can_and_cube):
    """The can and cube of the 125-body pile (seed 5 of the branch that pushed a ring inside a box
    out of the face its cap's centre faces): the cube's edge cuts 1.6 mm into the rim near its
    +y side, the cap's centre 14 mm below its bottom face. Pushed out of the bottom face, the
    ring's point reported 3.6 mm and the cube sank onto the can; its ring leaves by the +y face,
    and no contact is deeper than the rim lies in the cube (its deepest point's way out through
    its nearest face, the rim sampled every 0.1 degree)."""
    R_can, p_can = _axes([-0.924, -0.292, -0.248], [-0.01, -0.629, 0.778]), np.array([0.1352, -0.0801, 0.0984])
    R_cube, p_cube = _axes([-0.673, -0.35, 0.652], [0.418, -0.907, -0.055]), np.array([0.0777, -0.1364, 0.1021])
    active, depth, normal, _ = can_and_cube(R_can, p_can, R_cube, p_cube)
    angle = np.linspace(0.0, 2 * np.pi, 3600, endpoint=False)
    rim = p_can + 0.5 * L * R_can[:, 2] + R * (np.cos(angle)[:, None] * R_can[:, 0] + np.sin(angle)[:, None] * R_can[:, 1])
    inside = 0.03 - np.abs((rim - p_cube) @ R_cube)
    in_cube = np.all(inside > 0, axis=1)
    assert in_cube.any() and np.any(active)
    assert np.max(depth[active]) <= np.max(np.min(inside[in_cube], axis=1))
    np.testing.assert_allclose(normal[active][np.argmax(depth[active])], R_cube[:, 1], atol=1e-9)
