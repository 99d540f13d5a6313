"""Gradients through rolling and sliding contacts of every exact shape kind, on the terrain and on
another body, against central differences (issue 29).

Float64, 2 ms, 0.1 s. On the ground (a world without a collision table): a sphere and a lying
capsule rolling without slipping, and a sphere, a capsule (along its axis), a box, a cylinder (on
a cap) and a mesh hull sliding. On a free slab each (a contact between two models: the round
kinds' pair contacts; a box sliding down another model's ramp is checked in
``test_bodies_touching``, a hull on a hull in ``test_hulls``): the sphere and the capsule,
rolling and sliding. What is differentiated: how far each body travels along x, with respect to
a scale of every start velocity and to the friction of every model; bodies that never meet make
the Jacobian's rows independent, so one forward-mode Jacobian of two columns checks every body.
One compiled program per world gives the values of the differences too. Over 0.1 s no sliding
body stops or starts to roll (the sphere would roll from ``2 v / (7 mu g)`` = 0.19 s): every path
is smooth.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.simulation.world import WorldModel, world_rollout

DT, STEPS = 0.002, 50
SPEED = 2.0  # [m/s] every body's start speed along x
FRICTION = 0.3
G = 9.80665
LYING_Y = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]  # a quarter turn about x: the axis along y
LYING_X = [np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0]  # a quarter turn about y: the axis along x
CUBE = np.array([[x, y, z] for x in (-0.05, 0.05) for y in (-0.05, 0.05) for z in (-0.05, 0.05)])
CUBE_FACES = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]


def hull_cube(name: str, path: str) -> js.Model:
    """A free 1 kg cube of 0.1 m whose collision is the OBJ mesh at ``path`` (a hull by default)."""
    inertia = 1.0 * 0.02 / 12
    return js.load_model(
        f"""<robot name="{name}"><link name="{name}"><inertial><mass value="1.0"/>
        <inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><mesh filename="{path}"/></geometry></collision></link></robot>""")


def bodies(mesh: str) -> dict:
    """Per body: ``(make(name), rolling, half height [m] above its contact, start quaternion)``."""
    return {
        "sphere rolling": (lambda n: scenes.sphere(0.05, name=n), True, 0.05, None),
        "capsule rolling": (lambda n: scenes.capsule(0.03, 0.1, name=n), True, 0.03, LYING_Y),
        "sphere sliding": (lambda n: scenes.sphere(0.05, name=n), False, 0.05, None),
        "capsule sliding": (lambda n: scenes.capsule(0.03, 0.1, name=n), False, 0.03, LYING_X),
        "box sliding": (lambda n: scenes.box((0.1, 0.1, 0.1), name=n), False, 0.05, None),
        "cylinder sliding": (lambda n: scenes.cylinder(0.05, 0.1, name=n), False, 0.05, None),
        "hull sliding": (lambda n: hull_cube(n, mesh), False, 0.05, None),
    }


def travel_of(folder, on_slab: bool, kinds: tuple[str, ...] | None = None) -> tuple[list[str], object]:
    """``(names, jitted (scale, friction) -> (travel (N,), jacobian (N, 2)))``: each body's travel
    along x [m] after 0.1 s, on the ground or each on a slab of its own, and its derivatives (the
    cube's mesh written to ``folder``). On the ground the bodies never meet: a world without a
    collision table."""
    mesh = folder / "cube.obj"
    mesh.write_text("".join(f"v {x:.17g} {y:.17g} {z:.17g}\n" for x, y, z in CUBE)
                    + "".join("f " + " ".join(str(i + 1) for i in face) + "\n" for face in CUBE_FACES))
    models, states, riders, names = [], [], [], []
    for k, (name, (make, rolling, half, quaternion)) in enumerate(bodies(str(mesh)).items()):
        if kinds is not None and name.split()[0] not in kinds:
            continue
        y, floor = 0.5 * k, 0.0
        if on_slab:
            slab = scenes.box((3.0, 0.3, 0.1), mass=20.0, name=f"slab{k}")
            models.append(slab)
            states.append(js.State.build(slab, base_position=[0.6, y, 0.0496]))
            floor = 0.0996
        body = make(f"rider{k}")
        turned = {} if quaternion is None else {"base_quaternion": quaternion}
        spin = SPEED / half if rolling else 0.0
        riders.append(len(models))
        names.append(f"{name} on the {'slab' if on_slab else 'ground'}")
        models.append(body)
        states.append(js.State.build(body, base_position=[-0.6, y, floor + half - 0.0003],
                                     base_velocity=[SPEED, 0.0, 0.0, 0.0, spin, 0.0], **turned))
    world = WorldModel.build(models, dt=DT, friction=FRICTION, collisions=on_slab)
    start = world.initial_state(states)

    def travelled(p):
        scale, friction = p[0], p[1]
        scaled = start._replace(states=tuple(s.replace(base_velocity=scale * s.base_velocity) for s in start.states))
        changed = world.replace(model_params=tuple(
            q.replace(contact=q.contact.replace(friction=friction)) for q in world.model_params))
        final, _ = world_rollout(changed, scaled, None, STEPS)
        return jnp.stack([final.states[r].base_position[0] - start.states[r].base_position[0] for r in riders])

    return names, jax.jit(lambda p: (travelled(p), jax.jacfwd(travelled)(p)))


@pytest.fixture(scope="module", params=["ground", "slab"])
def travel(request, tmp_path_factory):
    """:func:`travel_of` on the ground (every kind) or on slabs (the round kinds)."""
    on_slab = request.param == "slab"
    return travel_of(tmp_path_factory.mktemp("gradients"), on_slab, ("sphere", "capsule") if on_slab else None)


def test_travel_derivatives_equal_central_differences(travel, figures):
    """d travel / d speed and d travel / d friction agree with central differences (1e-5 relative
    to each column's largest), and with the motion's own laws: sliding, ``v0 T`` and ``-g T^2 / 2``;
    rolling without slipping, ``v0 T`` and no dependence on friction."""
    names, run = travel
    at = jnp.array([1.0, FRICTION])
    value, jacobian = (np.asarray(x) for x in run(at))
    h = 1e-6
    numeric = np.stack([(np.asarray(run(at + h * e)[0]) - np.asarray(run(at - h * e)[0])) / (2 * h) for e in np.eye(2)], axis=1)
    assert np.isfinite(jacobian).all()
    T = STEPS * DT
    for i, name in enumerate(names):
        figures(f"contact gradients: {name}, d travel / d speed, AD / FD - 1", jacobian[i, 0] / numeric[i, 0] - 1)
        rolling = "rolling" in name
        assert value[i] == pytest.approx(SPEED * T if rolling else SPEED * T - FRICTION * G * T**2 / 2, rel=0.02), name
        assert jacobian[i, 0] == pytest.approx(SPEED * T, rel=0.02), name
        if not rolling:
            figures(f"contact gradients: {name}, d travel / d friction, AD / FD - 1", jacobian[i, 1] / numeric[i, 1] - 1)
            assert jacobian[i, 1] == pytest.approx(-G * T**2 / 2, rel=0.05), name
    for column in range(2):
        scale = np.abs(numeric[:, column]).max()
        np.testing.assert_allclose(jacobian[:, column], numeric[:, column], rtol=0, atol=1e-5 * scale)
