"""The scene builders: bodies of uniform density whose mass and inertia equal a numerical
integration of their shape, arguments checked by name, and static geometry that bodies rest on
and stop against."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.simulation import pair_memory
from jaxsim_like.simulation.collision.forces import PairLaw


def _grid_inertia(inside, half: np.ndarray, mass: float, cells: int = 160) -> np.ndarray:
    """The inertia tensor about the origin of ``mass`` spread uniformly over the cells of a grid
    on the box ``[-half, half]`` whose centres satisfy ``inside(x, y, z)``."""
    axes = [(np.arange(cells) + 0.5) / cells * 2 * h - h for h in half]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    keep = inside(x, y, z)
    p = np.stack([x[keep], y[keep], z[keep]], axis=1)
    m = mass / len(p)
    return m * (np.sum(p * p) * np.eye(3) - p.T @ p)


CASES = {
    "box": (lambda: scenes.box((0.1, 0.2, 0.3), mass=2.0), lambda x, y, z: np.ones_like(x, bool), (0.05, 0.1, 0.15), 2.0),
    "sphere": (lambda: scenes.sphere(0.05, mass=1.5), lambda x, y, z: x**2 + y**2 + z**2 <= 0.05**2, (0.05,) * 3, 1.5),
    "cylinder": (lambda: scenes.cylinder(0.03, 0.1, mass=0.7), lambda x, y, z: x**2 + y**2 <= 0.03**2, (0.03, 0.03, 0.05), 0.7),
    "capsule": (
        lambda: scenes.capsule(0.02, 0.06, mass=0.2),
        lambda x, y, z: x**2 + y**2 + np.maximum(np.abs(z) - 0.03, 0.0) ** 2 <= 0.02**2,
        (0.02, 0.02, 0.05),
        0.2,
    ),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_body_has_the_mass_and_inertia_of_its_shape(kind):
    build, inside, half, mass = CASES[kind]
    model = build()
    assert model.floating_base and model.number_of_links == 1 and model.dofs == 0
    assert float(model.total_mass) == pytest.approx(mass, rel=1e-6)
    expected = _grid_inertia(inside, np.asarray(half), mass)
    # The grid's own error is below 1e-3 of the largest moment at 160 cells a side.
    np.testing.assert_allclose(np.asarray(model.link_inertia[0]), expected, atol=2e-3 * np.abs(expected).max())
    np.testing.assert_allclose(np.asarray(model.link_com[0]), np.zeros(3), atol=1e-12)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: scenes.box((0.1, -1.0, 0.1)), "size"),
        (lambda: scenes.sphere(0.0), "radius"),
        (lambda: scenes.capsule(0.02, float("inf")), "length"),
        (lambda: scenes.cylinder(mass=-1.0), "mass"),
        (lambda: scenes.box(name="a box"), "name"),
        (lambda: scenes.bin(half_width=(0.1, float("nan"))), "half_width"),
        (lambda: scenes.table(height=0.01), "thickness"),
        (lambda: scenes.table(centre=(0.0,)), "centre"),
    ],
)
def test_bad_arguments_are_named(call, named):
    with pytest.raises(ValueError, match=named):
        call()


def _rollout(model, state, terrain, seconds=0.6, dt=0.002):
    """The state after ``seconds`` on ``terrain``, and the base positions ``(T, 3)`` on the way
    (a scan of steps: the state carries the tangential memory of the contacts with the terrain's
    boxes from the first step on, :func:`pair_memory`)."""
    params = js.SimulationParams.build(model, dt=dt, terrain=terrain)

    def one(s, _):
        s = js.step(model, s, params=params)[0]
        return s, s.base_position

    return jax.jit(lambda s: jax.lax.scan(one, pair_memory(params, s), None, length=int(round(seconds / dt))))(state)


def test_a_box_rests_on_the_table_and_a_ball_stops_against_the_bin_wall():
    terrain = scenes.table(height=0.5, centre=(1.0, 0.0), terrain=scenes.bin(half_width=0.2, height=0.2))
    cube = scenes.box((0.1, 0.1, 0.1), mass=0.5)
    on_table, _ = _rollout(cube, js.State.build(cube, base_position=[1.0, 0.0, 0.56]), terrain)
    # the top at 0.5, the cube sunk by the pairs' max_penetration (it meets the table's box as a shape)
    assert float(on_table.base_position[2]) == pytest.approx(0.55 - float(PairLaw.build().max_penetration), abs=2e-5)
    assert float(jnp.abs(on_table.base_velocity).max()) < 1e-3

    ball = scenes.sphere(0.05, mass=0.2)
    rolling = js.State.build(ball, base_position=[0.0, 0.0, 0.05], base_velocity=[1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    _, path = _rollout(ball, rolling, terrain)
    farthest = float(path[:, 0].max())  # the wall's inner face is at x = 0.2
    assert 0.15 < farthest < 0.15 + 5e-3  # a 1 m/s impact sinks 3 mm: the law is sized for resting loads
    assert float(jnp.abs(path[:, 2] - 0.05).max()) < 2e-3
