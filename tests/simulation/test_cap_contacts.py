"""A capsule on a cylinder's cap and across its rim (issue 29): the capsule-cylinder pair's rim
slots (:func:`~jaxsim_like.simulation.collision.cylinder.capsule_on_rim`) against a brute-force
reference of the overlap of the two convex shapes (the least over unit directions of the sum of
their support functions) and the analytic depth of poses built on a rim point; a capsule lying
flat on a cap rests on its ends' balls alone (no rim slot repeats them); a capsule slid across the
rim keeps continuous slots; the slots' gradients stay finite at degenerate poses; and a capsule
at rest across a standing cylinder's cap rests at the pair law's ``max_penetration`` within 10 %
(with one end on the cap, deeper: within twice) with its weight within 0.5 %. A lying cylinder's
cap pressed against a standing one's side meets it as deep as the two overlap (the caps' slot,
:func:`~jaxsim_like.simulation.collision.cylinder.caps_facing`, along the side's generator nearest
to the cap). Float64."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.simulation.collision import KINDS
from jaxsim_like.simulation.world import WorldModel
from collision_worlds import rest_on_pairs
from test_ellipsoid_pairs import pose, reach, reference, reference_of

RIM = slice(2, 4)  # the capsule-cylinder kind's rim slots, after its side's two
G = 9.81


@pytest.fixture(scope="module")
def kernel():
    """The capsule-cylinder kernel, batched over pairs (the capsule a, the cylinder b)."""
    return jax.jit(jax.vmap(KINDS["capsule-cylinder"].kernel))


def _batch(cases) -> tuple[jax.Array, ...]:
    return tuple(jnp.asarray(np.stack([case[k] for case in cases])) for k in range(4))


def _across_rims(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]]:
    """``count`` capsules touching a cylinder's rim, ``(H_a, size_a, H_b, size_b, depth)``: a
    random rim point, a random outward normal there leaning 0.15 to pi/2 rad from the side
    towards the cap (the rim's own normals), and a segment across that normal whose point at
    least a radius from its ends lies on the normal, ``depth`` (0 to 4 mm) into the rim: the
    segment's nearest point to the cylinder, so the two overlap by ``depth`` exactly (the distance
    to a convex shape is convex along the segment, least where the segment crosses its normal)."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        cylinder = np.array([rng.uniform(0.02, 0.06), rng.uniform(0.02, 0.06), 0.0])
        capsule = np.array([rng.uniform(0.01, 0.03), 0.0, 0.0])
        capsule[1] = capsule[0] + rng.uniform(0.01, 0.05)
        angle, lean, cap = rng.uniform(0, 2 * np.pi), rng.uniform(0.15, np.pi / 2), rng.choice([-1.0, 1.0])
        rim = np.array([cylinder[0] * np.cos(angle), cylinder[0] * np.sin(angle), cap * cylinder[1]])
        normal = np.array([np.cos(lean) * np.cos(angle), np.cos(lean) * np.sin(angle), cap * np.sin(lean)])
        axis = rng.normal(size=3)
        axis -= (axis @ normal) * normal
        axis /= np.linalg.norm(axis)
        across = np.cross(normal, axis)
        depth = rng.uniform(0.0, 0.004)
        along = rng.uniform(-1, 1) * (capsule[1] - capsule[0])  # the touching point at least a radius from the ends
        centre = rim + (capsule[0] - depth) * normal - along * axis
        H_b = pose(Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3) * 0.1)
        cases.append((H_b @ pose(np.column_stack([normal, across, axis]), centre), capsule, H_b, cylinder, depth))
    return cases


def test_a_capsule_across_a_rim_meets_it_as_deep_as_the_two_overlap(kernel, figures):
    cases = _across_rims(16, seed=3)
    slots = kernel(*_batch(cases))
    worst = 0.0
    for i, (H_a, size_a, H_b, size_b, depth) in enumerate(cases):
        brute, normal = reference(H_b, size_b, H_a, size_a, "cylinder")  # its normal from the capsule towards the cylinder
        rim = np.where(np.asarray(slots.valid[i, RIM]), np.asarray(slots.depth[i, RIM]), -np.inf)
        k = int(np.argmax(rim))
        assert brute == pytest.approx(depth, abs=1e-9)
        assert rim[k] <= brute + 1e-9
        position = np.asarray(slots.position[i, RIM])
        if np.all(rim > 0) and np.linalg.norm(position[0] - position[1]) < size_a[0]:
            continue  # two touching points within a radius: the second fades by the first's depth
        assert rim[k] == pytest.approx(brute, abs=1e-9), i
        np.testing.assert_allclose(np.asarray(slots.normal[i, 2 + k]), -normal, atol=1e-5)
        worst = max(worst, abs(rim[k] - brute))
    figures("capsule on a cylinder's rim vs brute force: largest depth error", worst, "m")


def test_the_rim_slots_are_never_deeper_than_the_overlap(kernel):
    """Random capsules about a random cylinder, from 4 mm into it to 5 mm apart along a random
    direction (the side, the caps, the rims)."""
    rng = np.random.default_rng(5)
    cases = []
    for _ in range(10):
        size_b = np.array([rng.uniform(0.02, 0.06), rng.uniform(0.02, 0.06), 0.0])
        size_a = np.array([rng.uniform(0.01, 0.03), rng.uniform(0.01, 0.06), 0.0])
        H_b = pose(Rotation.random(random_state=rng).as_matrix(), np.zeros(3))
        R_a = Rotation.random(random_state=rng).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        local = H_b[:3, :3].T @ d
        reach_b = size_b[1] * abs(local[2]) + size_b[0] * np.hypot(local[0], local[1])
        reach_a = size_a[1] * abs(R_a[:, 2] @ d) + size_a[0]
        cases.append((pose(R_a, (reach_b + reach_a + rng.uniform(-0.004, 0.005)) * d), size_a, H_b, size_b))
    slots = kernel(*_batch(cases))
    for i, (H_a, size_a, H_b, size_b) in enumerate(cases):
        brute, _ = reference(H_b, size_b, H_a, size_a, "cylinder")
        rim = np.where(np.asarray(slots.valid[i, RIM]), np.asarray(slots.depth[i, RIM]), -np.inf)
        assert np.max(rim) <= max(brute, 0.0) + 1e-9, i


def _lying(centre, turn: float = 0.0) -> np.ndarray:
    """A capsule's pose lying at ``centre``, its axis along world x turned by ``turn`` about z."""
    return pose(Rotation.from_euler("yz", [np.pi / 2, turn]).as_matrix(), centre)


CAN, ROD = np.array([0.04, 0.05, 0.0]), np.array([0.02, 0.05, 0.0])


def test_a_capsule_on_a_cap_rests_on_its_ends_and_across_a_cap_on_the_rim(kernel):
    """1 mm deep, lying: within the cap (its ends' collidable points carry it: no rim slot), over
    the whole cap (both rim crossings), and with one end on the cap (the crossing)."""
    height = CAN[1] + ROD[0] - 0.001
    within = (_lying([0.0, 0.0, height], 0.3), ROD * [1, 0.5, 1], np.eye(4), CAN)
    over = (_lying([0.0, 0.01, height]), ROD, np.eye(4), CAN)
    one_end = (_lying([0.02, 0.0, height]), ROD, np.eye(4), CAN)
    slots = kernel(*_batch([within, over, one_end]))
    touching = np.asarray(slots.valid) & (np.asarray(slots.depth) > 0)
    assert not touching[0].any()
    np.testing.assert_allclose(np.asarray(slots.depth[1, RIM]), [0.001, 0.001], atol=1e-12)
    np.testing.assert_allclose(np.asarray(slots.position[1, RIM, 0]), [-np.sqrt(0.04**2 - 0.01**2), np.sqrt(0.04**2 - 0.01**2)], atol=1e-9)
    assert touching[2].sum() == 1 and touching[2, RIM].any()
    np.testing.assert_allclose(np.max(np.asarray(slots.depth[2, RIM])), 0.001, atol=1e-12)
    np.testing.assert_allclose(np.asarray(slots.normal[1, RIM]), [[0.0, 0.0, 1.0]] * 2, atol=1e-12)


def test_a_capsule_slid_across_a_rim_keeps_continuous_slots(kernel):
    """A capsule tilted 0.2 rad about its lying axis's normal, 1 mm into the rim, slid along its
    axis from one end on the cap to hanging off, in steps of 0.05 mm: no slot's depth jumps."""
    height = CAN[1] + ROD[0]
    tilt = Rotation.from_euler("y", 0.2).as_matrix()
    shifts = np.linspace(-0.06, 0.08, 2801)
    cases = [(pose(tilt @ _lying(np.zeros(3))[:3, :3], [CAN[0] + s, 0.003, height - 0.001]), ROD, np.eye(4), CAN) for s in shifts]
    slots = kernel(*_batch(cases))
    depth = np.where(np.asarray(slots.valid), np.maximum(np.asarray(slots.depth), 0.0), 0.0)
    assert np.max(depth[:, RIM]) > 0.0005
    assert np.abs(np.diff(depth, axis=0)).max() < 0.05e-3


@pytest.mark.parametrize("H_a", [
    _lying([0.0, 0.0, 0.069]),  # across the cap's centre: the line through the axis
    pose(np.eye(3), [0.059, 0.0, 0.0]),  # along the side: parallel to the axis
    _lying([0.0, 0.04, 0.05]),  # its segment tangent to the rim's circle
    _lying([0.0, 0.02, 0.0705]),  # over the rim, the cap's plane
], ids=["through-axis", "parallel", "tangent", "flat"])
def test_the_rim_slots_gradients_are_finite_at_degenerate_poses(H_a):
    def depths(H):
        return jnp.sum(KINDS["capsule-cylinder"].kernel(H, jnp.asarray(ROD), jnp.eye(4), jnp.asarray(CAN)).depth[RIM])

    gradient = jax.grad(depths)(jnp.asarray(H_a))
    assert np.all(np.isfinite(np.asarray(gradient)))


def test_a_capsule_rests_across_a_cylinders_cap_at_the_pair_depth_with_its_weight(figures):
    """A 1 kg capsule (2 cm radius, 10 cm segment) lying on a 10 kg can standing on the ground
    (4 cm radius, 10 cm long): across the whole cap, on its two rim crossings, at the law's
    ``max_penetration``; with one end on the cap (its centre 2 cm from the can's axis), on that
    end's ball and the crossing, which carries more of the weight: deeper, within issue 29's
    twice ``max_penetration``."""
    scenes_ = {"over the cap": 0.0, "one end on the cap": 0.02}
    models, states = [], []
    for i, shift in enumerate(scenes_.values()):
        base, top = scenes.cylinder(CAN[0], 2 * CAN[1], mass=10.0), scenes.capsule(ROD[0], 2 * ROD[1], mass=1.0)
        models += [base, top]
        x = 0.6 * i
        quaternion = np.roll(Rotation.from_euler("y", np.pi / 2).as_quat(), 1)
        states += [js.State.build(base, base_position=[x, 0.0, CAN[1] - 0.0009]),
                   js.State.build(top, base_position=[x + shift, 0.003, 2 * CAN[1] + ROD[0] + 0.0005], base_quaternion=quaternion)]
    world = WorldModel.build(models, dt=0.002)
    normal, depth, _ = rest_on_pairs(world, world.initial_state(states, history=0), 750, 125)
    max_penetration = float(world.pair_law.max_penetration)
    for i, scene in enumerate(scenes_):
        figures(f"capsule rest {scene} of a can: depth / max_penetration", depth[i] / max_penetration)
        np.testing.assert_allclose(normal[:, i], G, rtol=5e-3)
    assert depth[0] == pytest.approx(max_penetration, rel=0.1)
    assert max_penetration < depth[1] < 2 * max_penetration  # the crossing carries 5/7 of the weight, the end 2/7


def test_a_cylinders_cap_pressed_against_anothers_side_meets_it_as_deep_as_the_two_overlap():
    """Cans of 3 cm radius and 6 cm length: one standing, one lying with its cap 0.5 to 3 mm into
    the other's side, turned up to 0.1 rad and rolled, its axis up to 1 cm beside the other's and
    5 mm above or below its middle (the pile's two cans whose true overlap the slots missed)."""
    rng = np.random.default_rng(0)
    can = np.array([0.03, 0.03, 0.0])
    cases = []
    for _ in range(8):
        R = Rotation.from_euler("zyx", [rng.uniform(-0.1, 0.1), np.pi / 2 + rng.uniform(-0.05, 0.05), rng.uniform(0, 2 * np.pi)]).as_matrix()
        beside = np.array([0.0, rng.uniform(-0.01, 0.01), rng.uniform(-0.005, 0.005)])
        cases.append((pose(R, np.array([can[0] - rng.uniform(0.0005, 0.003), 0.0, 0.0]) + beside + can[1] * R[:, 2]), can, np.eye(4), can))
    slots = jax.jit(jax.vmap(KINDS["cylinder-cylinder"].kernel))(*_batch(cases))
    for i, (H_a, size_a, H_b, size_b) in enumerate(cases):
        brute, _ = reference_of(lambda n: reach(H_b, size_b, n, "cylinder") + reach(H_a, size_a, -n, "cylinder"))
        depth = np.where(np.asarray(slots.valid[i]), np.asarray(slots.depth[i]), -np.inf)
        assert np.max(depth) == pytest.approx(brute, rel=5e-3), i
