"""Every kind of body at rest on another body: a sphere, a box, a standing cylinder, a lying
capsule and a convex hull (a mesh cube), each on a slab lying on the ground, 1 kg on 10 kg and
10 kg on 1 kg, and on a standing drum (a cylinder's cap). The contacts' normal force is the
body's weight within 0.5 %, and the body rests at the pair law's ``max_penetration`` within 10 %
(issue 29), whatever number of contacts it rests on: ``RESTING_CONTACTS`` (4) or more (the box's
and the hull's corners, the cylinder's 8 rim points: its rim's contact from the box-cylinder
narrow phase no longer doubles one of them) sharing four laws, and the sphere's one and the
capsule's two each counting as four and as two (:func:`~jaxsim_like.simulation.collision.forces.shared_pair_law`).
One world of all of them, one compiled rollout, float64."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.simulation.collision.forces import PairLaw
from jaxsim_like.simulation.world import WorldModel
from collision_worlds import rest_on_pairs

DT, SECONDS, G = 0.002, 1.5, 9.81
SPACING = 0.6  # [m] between the scenes, far beyond any body's reach
CUBE = np.array(list(itertools.product((-0.05, 0.05), repeat=3)))
CUBE_FACES = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
LYING = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]  # a quarter turn about x: a capsule along y


def hull_cube(path: str, mass: float) -> js.Model:
    inertia = mass * 0.02 / 12
    return js.load_model(
        f"""<robot name="hull"><link name="link"><inertial><mass value="{mass}"/>
        <inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><mesh filename="{path}"/></geometry></collision></link></robot>"""
    )


@pytest.fixture(scope="module")
def rested(tmp_path_factory):
    """Per scene ``(top kind, top mass, base)``: the deepest contact between the two bodies at
    the end [m], the normal force on the top over the last 0.25 s ``(K,)`` [N] and the number of
    touching contacts at the end."""
    obj = tmp_path_factory.mktemp("pair_rest") / "cube.obj"
    obj.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in CUBE) + "".join("f " + " ".join(str(i + 1) for i in f) + "\n" for f in CUBE_FACES))
    tops = {
        "sphere": lambda m: (scenes.sphere(0.05, mass=m), 0.05, None),
        "box": lambda m: (scenes.box((0.1, 0.1, 0.1), mass=m), 0.05, None),
        "cylinder": lambda m: (scenes.cylinder(0.05, 0.1, mass=m), 0.05, None),
        "capsule": lambda m: (scenes.capsule(0.03, 0.1, mass=m), 0.03, LYING),
        "hull": lambda m: (hull_cube(str(obj), m), 0.05, None),
    }
    scenes_ = [(kind, top, base) for kind in tops for top, base in ((1.0, ("slab", 10.0)), (10.0, ("slab", 1.0)), (1.0, ("drum", 10.0)))]
    models, states = [], []
    for i, (kind, top_mass, (base_kind, base_mass)) in enumerate(scenes_):
        x = SPACING * i
        base = scenes.box((0.4, 0.4, 0.1), mass=base_mass) if base_kind == "slab" else scenes.cylinder(0.15, 0.1, mass=base_mass)
        top, half, quaternion = tops[kind](top_mass)
        models += [base, top]
        states += [js.State.build(base, base_position=[x, 0.0, 0.0491]),
                   js.State.build(top, base_position=[x + 0.02, 0.01, 0.1 + half + 0.0005],
                                  **({} if quaternion is None else {"base_quaternion": quaternion}))]
    world = WorldModel.build(models, dt=DT)
    steps, kept = int(SECONDS / DT), int(0.25 / DT)

    normal, depth, count = rest_on_pairs(world, world.initial_state(states, history=0), steps, kept)
    assert world.pair_law.max_penetration == PairLaw.build().max_penetration
    return {scene: (float(depth[i]), np.asarray(normal[:, i]), int(count[i])) for i, scene in enumerate(
        (kind, top, base[0]) for kind, top, base in scenes_)}, float(world.pair_law.max_penetration)


@pytest.mark.parametrize("kind, contacts", [("sphere", 1), ("box", 4), ("cylinder", 8), ("capsule", 2), ("hull", 4)])
def test_each_kind_rests_on_a_body_at_the_pair_depth_with_its_weight(rested, kind, contacts, figures):
    figures_by_scene, max_penetration = rested
    for top_mass, base in ((1.0, "slab"), (10.0, "slab"), (1.0, "drum")):
        depth, normal, count = figures_by_scene[(kind, top_mass, base)]
        figures(f"pair rest: {kind} {top_mass:g} kg on a {base}: depth / max_penetration", depth / max_penetration)
        assert count == contacts
        assert depth == pytest.approx(max_penetration, rel=0.1)
        np.testing.assert_allclose(normal, top_mass * G, rtol=5e-3)
