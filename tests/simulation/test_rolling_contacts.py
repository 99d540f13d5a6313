"""Round bodies rolling steadily on another body or on the ground press on it with their weight,
as at rest (issue 29): a sphere (r = 5 cm) and a lying capsule (r = 3 cm), 1 kg each, rolling
without slipping at 0.2, 1 and 2 m/s on a free 20 kg slab (a contact between two models) and on
the ground, beside ones at rest. The implicit step linearises each contact's law over the step; a
round body's contact moves with its centre, not with the material point under it
(:func:`jaxsim_like.simulation.contacts.round_drift`), and without that drift the linearised law
saw the lowest point's centripetal acceleration ``w^2 r``: the capsule rolling at 2 m/s on the
slab sank 13 times as deep as at rest, the ball on the ground 4.9 times. Their depth while
rolling is now their depth at rest within 0.1 %, with the world's Gauss-Seidel sweeps converged
(16; at the default 4 the slab's contacts are within 2 % at 2 m/s, the sweeps' error). On the
ground the drift is a free body's only (a robot's feet keep the step's linearisation, see
``model_step._terrain_drift``). One world, one compiled rollout, float64, 2 ms."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.simulation.world import WorldModel, world_rollout

DT, SECONDS = 0.002, 1.0
MAX_PENETRATION = 0.001  # [m] the terrain law's default
SPEEDS = (0.0, 0.2, 1.0, 2.0)  # [m/s]; the first at rest
LYING = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]  # a quarter turn about x: a capsule along y
BODIES = {"sphere": (lambda name: scenes.sphere(0.05, mass=1.0, name=name), 0.05, None),
          "capsule": (lambda name: scenes.capsule(0.03, 0.1, mass=1.0, name=name), 0.03, LYING)}


@pytest.fixture(scope="module")
def rolled():
    """Per body kind, the mean depth over the last half of the run ``(speeds,)`` [m] on the slab,
    and the radii of the slab contacts ``(radius_a, radius_b)`` at the end."""
    models, states, riding, rolling = [], [], [], []
    for k, (kind, (make, radius, quaternion)) in enumerate(BODIES.items()):
        turned = {} if quaternion is None else {"base_quaternion": quaternion}
        for i, speed in enumerate(SPEEDS):
            velocity = [speed, 0.0, 0.0, 0.0, speed / radius, 0.0]
            slab, rider, roller = scenes.box((3.0, 0.3, 0.1), mass=20.0, name=f"slab{kind}{i}"), make(f"rider{kind}{i}"), make(f"roller{kind}{i}")
            y = -1.0 - 4.0 * k - i
            riding.append(len(models) + 1)
            rolling.append(len(models) + 2)
            models += [slab, rider, roller]
            states += [js.State.build(slab, base_position=[0.0, y, 0.0496]),
                       js.State.build(rider, base_position=[-1.2, y, 0.1 + radius - 0.0003], base_velocity=velocity, **turned),
                       js.State.build(roller, base_position=[-1.2, y + 0.5, radius - 0.001], base_velocity=velocity, **turned)]
    world = WorldModel.build(models, dt=DT, pair_sweeps=16)
    steps = int(SECONDS / DT)
    riders = jnp.asarray([world.collision.link_offsets[m] for m in riding])

    @jax.jit
    def run(state):
        _, outputs = world_rollout(world, state, None, steps)
        contacts = outputs.pairs.contacts
        on = (contacts.link_a[:, None] == riders[None, :, None]) & contacts.active[:, None]
        slab = jnp.max(jnp.where(on, contacts.depth[:, None], 0.0), axis=-1)
        last = jax.tree.map(lambda x: x[-1], contacts)
        touching = (last.link_a[None] == riders[:, None]) & last.active[None]
        radii = jnp.stack([jnp.max(jnp.where(touching, last.radius_a[None], -1.0), axis=1),
                           jnp.max(jnp.where(touching, last.radius_b[None], -1.0), axis=1)], axis=1)
        ground = jnp.stack([jnp.max(outputs.models[m].penetration, axis=-1) for m in rolling], axis=-1)
        return jnp.mean(slab[steps // 2 :], axis=0), radii, jnp.mean(ground[steps // 2 :], axis=0)

    slab, radii, ground = (np.asarray(x).reshape(len(BODIES), len(SPEEDS), *np.shape(x)[1:]) for x in run(world.initial_state(states)))
    return {kind: (slab[k], radii[k], ground[k]) for k, kind in enumerate(BODIES)}


@pytest.mark.parametrize("kind", list(BODIES))
def test_a_rolling_body_presses_as_at_rest(rolled, kind, figures):
    slab, radii, ground = rolled[kind]
    np.testing.assert_allclose(radii, np.tile([BODIES[kind][1], 0.0], (len(SPEEDS), 1)))  # round a on a flat b
    assert ground[0] == pytest.approx(MAX_PENETRATION, rel=1e-6)
    for i, speed in enumerate(SPEEDS[1:], 1):
        figures(f"rolling contacts: {kind} at {speed:g} m/s on a slab, depth / at rest", slab[i] / slab[0])
        figures(f"rolling contacts: {kind} at {speed:g} m/s on the ground, depth / at rest", ground[i] / ground[0])
        assert slab[i] == pytest.approx(slab[0], rel=1e-3)
        assert ground[i] == pytest.approx(ground[0], rel=1e-3)
