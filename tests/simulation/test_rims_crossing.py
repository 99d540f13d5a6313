"""A cylinder's rim pressed across another cylinder's rim (issue 29): the cylinder-cylinder narrow
phase's rims slot (:func:`~jaxsim_like.simulation.collision.rims.rims_crossing`) against the
brute-force overlap of the two shapes (:func:`test_ellipsoid_pairs.reference_of`, their support
functions) at random rim-on-rim poses and at the 125-body pile's poses where a can tilted 47
degrees lay rim on rim across a standing can (the slots reported 0.74 mm where the two overlapped
3.85 mm); no slot deeper than the two overlap there; the slot fading continuously as the rims'
contact turns into a cap's; and the kind compiled without sines or cosines. Float64.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_ellipsoid_pairs import pose, reach, reference_of, rotation

from jaxsim_like.simulation.collision import KINDS

CAN = np.array([0.03, 0.03, 0.0])  # the 125-body pile's cylinders (radius, half length)
PILE_PAIR = (  # the pile's cylinders 67 (standing) and 91 (tilted over its rim) at the end of its run
    pose(rotation([-0.7060840395273482, -0.0023329851771425017, -0.002444203614484365, 0.708119984306047]),
         [-0.003374425250630982, 0.14558653391374424, 0.02895969465042657]), CAN,
    pose(rotation([0.5644436938365969, -0.3956373553556297, -0.019973897091834916, -0.7242067681058124]),
         [0.0373273579916111, 0.11214170688801507, 0.08925111284851943]), CAN)
RIMS = 1  # the cylinder-cylinder kind's rims slot
LEAN = 0.2  # the least part of the reference normal along either rim's cap's and side's outward normals of a pose that is checked (the slot's full depth)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def rim_on_rim(count: int, seed: int) -> list[tuple]:
    """``count`` pairs ``(H_a, size_a, H_b, size_b)``: b's rim pressed 0.2 to 4 mm into a's rim along
    a direction between a's cap's and side's outward normals there, b turned so that the
    direction lies between its own cap's and side's too (its rim crossing a's at a random angle)."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(count):
        size_a = np.array([rng.uniform(0.02, 0.05), rng.uniform(0.02, 0.06), 0.0])
        size_b = np.array([rng.uniform(0.02, 0.05), rng.uniform(0.02, 0.06), 0.0])
        R_a = Rotation.random(random_state=rng).as_matrix()
        H_a = pose(R_a, rng.normal(size=3) * 0.1)
        cap, turn = rng.choice([-1.0, 1.0]), rng.uniform(0.0, 2 * np.pi)
        radial = R_a @ np.array([np.cos(turn), np.sin(turn), 0.0])
        alpha, beta = np.radians(rng.uniform(20.0, 70.0, 2))
        out = cap * R_a[:, 2]
        m = np.cos(alpha) * out + np.sin(alpha) * radial  # from a towards b
        p = H_a[:3, 3] + size_a[1] * out + size_a[0] * radial
        t = _unit(np.cross(m, rng.normal(size=3)))
        out_b = -np.cos(beta) * m + np.sin(beta) * t
        radial_b = -np.sin(beta) * m - np.cos(beta) * t
        q = p - rng.uniform(0.0002, 0.004) * m
        centre_b = q - size_b[0] * radial_b - size_b[1] * out_b
        axis_b = -out_b
        x = _unit(np.cross(axis_b, rng.normal(size=3)))
        pairs.append((H_a, size_a, pose(np.stack([x, np.cross(axis_b, x), axis_b], axis=1), centre_b), size_b))
    return pairs


def rims_lean(H_a, size_a, H_b, size_b, normal) -> float:
    """The least part of the unit ``normal (3,)`` (from b towards a) along the outward normals of the
    caps and sides of the two at their support points (a's along ``-normal``, b's along ``normal``)."""
    parts = []
    for H, size, n in ((H_a, size_a, -normal), (H_b, size_b, normal)):
        axis = H[:3, 2]
        radial = n - (n @ axis) * axis
        parts += [abs(n @ axis), np.linalg.norm(radial)]
    return min(parts)


def _stacked(pairs: list[tuple]) -> list[jax.Array]:
    return [jnp.asarray(np.stack([pair[k] for pair in pairs])) for k in range(4)]


@pytest.fixture(scope="module")
def kernel():
    """The cylinder-cylinder kind's narrow phase, batched over pairs."""
    return jax.jit(jax.vmap(KINDS["cylinder-cylinder"].kernel))


@pytest.fixture(scope="module")
def poses(kernel):
    """The random rim-on-rim pairs (two seeds), the pile's last, their slots and their brute-force overlaps and directions."""
    pairs = rim_on_rim(160, seed=0) + rim_on_rim(160, seed=1) + [PILE_PAIR]
    slots = kernel(*_stacked(pairs))
    references = [reference_of(lambda n, pair=pair: reach(pair[0], pair[1], n, "cylinder") + reach(pair[2], pair[3], -n, "cylinder"))
                  for pair in pairs]
    return pairs, slots, references


def test_a_rim_pressed_across_another_rim_is_as_deep_as_the_two_overlap(poses, figures):
    """Where the least overlap's direction lies within both rims' normal cones (by :data:`LEAN`),
    the rims slot (the second) is that overlap (1e-9 m) along that direction, and no slot is
    deeper; at the pile's pair 3.852 mm. Elsewhere (a side or a cap on the other's rim, nearer)
    the rims slot may report the rims' own deeper crossing: at most a quarter and 0.2 mm deeper
    than the overlap."""
    pairs, slots, references = poses
    depth = np.where(np.asarray(slots.valid), np.asarray(slots.depth), -np.inf)
    checked, worst = 0, 0.0
    for i, (pair, (overlap, normal)) in enumerate(zip(pairs, references)):
        assert depth[i, RIMS] <= 1.25 * overlap + 2e-4, i
        if overlap > 0 and rims_lean(*pair, -normal) > LEAN:
            checked += 1
            worst = max(worst, abs(depth[i, RIMS] - overlap))
            assert depth[i, RIMS] == pytest.approx(overlap, abs=1e-9), i
            assert depth[i].max() <= overlap + 1e-9, i
            np.testing.assert_allclose(-np.asarray(slots.normal[i, RIMS]), normal, atol=2e-4)  # the overlap is flat there
    assert references[-1][0] == pytest.approx(3.8523e-3, abs=1e-7) and checked >= 250
    assert depth[-1, RIMS] == pytest.approx(references[-1][0], abs=1e-9)
    figures("cylinder rim across a rim: worst error of the rims slot against the brute-force overlap", worst, "m")


def fading(count: int) -> list[tuple]:
    """``count`` pairs: b's rim pressed 2 mm into the top rim of the pile's can a (upright at the
    origin) along the direction halfway between a's cap's and side's outward normals there, b's
    rim crossing a's square, b turned about that point from 60 degrees between the direction and
    its cap's normal to none (b's cap pressed on a's rim)."""
    H_a = pose(np.eye(3), np.zeros(3))
    m = _unit(np.array([1.0, 0.0, 1.0]))  # from a towards b
    t = _unit(np.cross(m, [1.0, 0.0, 0.0]))
    q = np.array([CAN[0], 0.0, CAN[1]]) - 0.002 * m
    pairs = []
    for beta in np.radians(np.linspace(60.0, 0.0, count)):
        out_b, radial_b = -np.cos(beta) * m + np.sin(beta) * t, -np.sin(beta) * m - np.cos(beta) * t
        x = _unit(np.cross(out_b, [0.0, 0.0, 1.0]))
        pairs.append((H_a, CAN, pose(np.stack([x, np.cross(-out_b, x), -out_b], axis=1), q - CAN[0] * radial_b - CAN[1] * out_b), CAN))
    return pairs


def test_the_rims_slot_fades_continuously_into_a_caps_contact(kernel):
    """As b's rim, pressed 2 mm into a's, turns until b's cap presses on a's rim (:func:`fading`),
    the rims slot's depth moves by no more than the turn allows (no jump where a candidate fades
    or another becomes the deepest) and ends at none (the caps' slot's contact)."""
    slots = kernel(*_stacked(fading(600)))
    depth = np.where(np.asarray(slots.valid), np.maximum(np.asarray(slots.depth), 0.0), 0.0)[:, RIMS]
    assert depth[0] == pytest.approx(2e-3, abs=1e-9) and depth[-1] == 0.0
    assert np.abs(np.diff(depth)).max() < 5e-5


def test_the_kind_is_compiled_without_sines_or_cosines(kernel):
    """The cylinder-cylinder kind's optimised program (float64) has no sine or cosine: the Newton
    steps along a rim turn a unit (cos, sin) pair by Cayley rotations, the rim's samples and the
    caps' rays are constant turns."""
    text = kernel.lower(*_stacked(rim_on_rim(4, seed=2))).compile().as_text()
    assert " sine(" not in text and " cosine(" not in text
