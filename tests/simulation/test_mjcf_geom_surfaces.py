"""MJCF geoms' own friction, margin and gap, and a pair's with the floor (issue 31): contacts
combine them as MuJoCo does (the larger friction, margin and gap of the two geoms; a pair's
own), against ``mj_step`` in float64.

``SLOPE``: boxes on a floor of friction 0.2 under gravity tilted by 0.35 rad (``tan = 0.365``):
geom frictions 0.1 (slides with the floor's 0.2), 0.3 (slides) and 0.5 (sticks), a box of
friction 1 whose pair with the floor has friction 0.25 and a 1 cm margin, and one of friction
0.15 and a priority above the floor's (its own friction rules). ``REST``: spheres of a
1 cm margin resting on the floor, one with a gap too, and one on a box (a body welded to the
world). Our terrain law sinks a body at rest by ``max_penetration`` and MuJoCo's soft
contacts these by at most 0.4 mm: the worlds here take 0.3 mm, so that the rest heights
compare within 0.5 mm. One compiled rollout per scene, and one gradient.
"""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.loading import ContactSampling
from jaxsim_like.parsers import ModelLoadWarning, parse_mjcf_world
from jaxsim_like.simulation.world import WorldModel, world_rollout
from jaxsim_like.tasks.randomisation import Sample, apply

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

TILT = 0.35  # [rad]: the slope, as gravity's angle from the floor's normal
G = 9.81  # [m/s^2]
DT = 0.002  # [s]
MAX_PENETRATION = 3e-4  # [m]: our terrain law's depth at rest, near MuJoCo's here

SLOPE = f"""<mujoco><option timestep="{DT}" gravity="{G * math.sin(TILT)} 0 {-G * math.cos(TILT)}"/>
<worldbody><geom name="floor" type="plane" size="5 5 .1" friction="0.2"/>
<body name="low" pos="0 0 .05"><freejoint/><geom name="low" type="box" size=".05 .05 .05" mass="1" friction="0.1"/></body>
<body name="mid" pos="0 .3 .05"><freejoint/><geom name="mid" type="box" size=".05 .05 .05" mass="1" friction="0.3"/></body>
<body name="high" pos="0 .6 .05"><freejoint/><geom name="high" type="box" size=".05 .05 .05" mass="1" friction="0.5"/></body>
<body name="paired" pos="0 .9 .06"><freejoint/><geom name="paired" type="box" size=".05 .05 .05" mass="1"/></body>
<body name="first" pos="0 1.2 .05"><freejoint/><geom name="first" type="box" size=".05 .05 .05" mass="1" friction="0.15" priority="1"/></body>
</worldbody><contact><pair geom1="floor" geom2="paired" friction="0.25 0.25" margin="0.01"/></contact></mujoco>"""
FRICTION = {"low": 0.2, "mid": 0.3, "high": 0.5, "paired": 0.25, "first": 0.15}  # MuJoCo's: the larger of geom and floor, the pair's, or the geom's of higher priority
SLOPE_TIME = 1.0  # [s]: our boxes near their friction limit creep for a few tenths of a second before they slide

REST = f"""<mujoco><option timestep="{DT}"/>
<worldbody><geom name="floor" type="plane" size="5 5 .1"/>
<body name="ball" pos="0 0 .062"><freejoint/><geom name="ball" size=".05" mass="1" margin="0.01"/></body>
<body name="gapped" pos="0 .3 .062"><freejoint/><geom name="gapped" size=".05" mass="1" margin="0.01" gap="0.004"/></body>
<body name="table" pos="1 1 .05"><geom name="table" type="box" size=".1 .1 .05"/></body>
<body name="top" pos="1 1 .162"><freejoint/><geom name="top" size=".05" mass="1" margin="0.01"/></body>
</worldbody></mujoco>"""
REST_TIME = 0.5  # [s]


QUARTERS = 4


def mujoco_run(xml: str, seconds: float) -> list[dict[str, np.ndarray]]:
    """MuJoCo's body positions by name at each quarter of ``seconds``."""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(m.nbody)]
    quarter = int(round(seconds / m.opt.timestep)) // QUARTERS
    taken = []
    for _ in range(QUARTERS):
        for _ in range(quarter):
            mujoco.mj_step(m, d)
        taken.append({n: d.xpos[b].copy() for b, n in enumerate(names)})
    return taken


def our_run(xml: str, seconds: float, collisions: bool = True) -> tuple[list, list[dict[str, np.ndarray]]]:
    """Our models and their base positions by name at each quarter of ``seconds`` (one
    compiled quarter); ``collisions``: the bodies' contacts with each other (False where they
    never touch: the world's program then holds no pairs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelLoadWarning)
        description = parse_mjcf_world(xml)
    models = [build_model(x, collidable_points=ContactSampling().points) for x in description.models]
    world = WorldModel.build(models, dt=DT, gravity=description.gravity, max_penetration=MAX_PENETRATION, collisions=collisions)
    quarter = jax.jit(lambda s: world_rollout(world, s, None, int(round(seconds / DT)) // QUARTERS)[0])
    state, taken = world.initial_state(), []
    for _ in range(QUARTERS):
        state = quarter(state)
        taken.append({model.name: np.asarray(s.base_position) for model, s in zip(models, state.states) if model.floating_base})
    return models, taken


def acceleration(positions: list[dict[str, np.ndarray]], name: str, seconds: float) -> float:
    """Body ``name``'s acceleration along x [m/s^2] over the second half, from its positions at
    the last three quarters."""
    h = seconds / QUARTERS
    return float(positions[-1][name][0] - 2 * positions[-2][name][0] + positions[-3][name][0]) / h**2


@pytest.fixture(scope="module")
def slope():
    return mujoco_run(SLOPE, SLOPE_TIME), our_run(SLOPE, SLOPE_TIME, collisions=False)  # 0.3 m apart across the slope


def test_the_loader_gives_each_point_its_geoms_and_the_floors_friction():
    """The points of each box carry the larger of their geom's friction and the floor's, or
    their pair's with the floor, and its margin (none elsewhere)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelLoadWarning)
        models = [build_model(x, collidable_points=ContactSampling().points) for x in parse_mjcf_world(SLOPE).models]
    for model in models:
        assert np.all(np.asarray(model.point_friction) == FRICTION[model.name])
        assert np.all(np.asarray(model.point_margin) == (0.01 if model.name == "paired" else 0.0))


def test_which_box_slides_and_how_fast_is_mujocos(slope, figures):
    """Each box slides with ``g (sin - mu cos)`` of its friction by MuJoCo's rule (within 2 %,
    ours and MuJoCo's, over the second half of 1 s), or sticks; it rests at MuJoCo's height
    (the paired box 1 cm up, its pair's margin) within 0.5 mm."""
    theirs, (models, ours) = slope
    for model in models:
        expected = G * (math.sin(TILT) - FRICTION[model.name] * math.cos(TILT))
        found = {"ours": acceleration(ours, model.name, SLOPE_TIME), "MuJoCo": acceleration(theirs, model.name, SLOPE_TIME)}
        for who, value in found.items():
            figures(f"MJCF geom friction on a 0.35 rad slope: {model.name} acceleration {who}", value, "m/s^2")
            if expected > 0:
                assert value == pytest.approx(expected, rel=0.02), who
            else:
                assert abs(value) < 1e-3, who
        assert ours[-1][model.name][2] == pytest.approx(theirs[-1][model.name][2], abs=5e-4)
    assert ours[-1]["paired"][2] > 0.0595


def test_a_margin_holds_a_sphere_off_the_floor_and_off_a_box_as_in_mujoco(figures):
    """A sphere of a 1 cm margin rests 1 cm up on the floor, and on a box; a gap changes nothing
    (MuJoCo since 3.9). Rest heights within 0.5 mm of ``mj_step``'s after 0.5 s."""
    theirs, (_, ours) = mujoco_run(REST, REST_TIME), our_run(REST, REST_TIME)
    heights = {name: float(position[2]) for name, position in ours[-1].items()}
    for name, height in heights.items():
        figures(f"MJCF geom margin: {name} rest height ours - MuJoCo", height - theirs[-1][name][2], "m")
        assert height == pytest.approx(theirs[-1][name][2], abs=5e-4)
    assert heights["ball"] > 0.0595 and heights["top"] > 0.159 and heights["gapped"] == pytest.approx(heights["ball"], abs=1e-9)


def one_box() -> tuple[js.Model, np.ndarray]:
    """The slope's box of friction 0.3 alone, and the file's gravity."""
    xml = SLOPE[: SLOPE.index('<body name="low"')] + SLOPE[SLOPE.index('<body name="mid"') : SLOPE.index('<body name="high"')] + "</worldbody></mujoco>"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelLoadWarning)
        return js.load_model(xml), parse_mjcf_world(xml).gravity


def test_a_friction_given_for_a_model_with_its_files_frictions_warns():
    """The file's frictions are kept for the terrain contacts: a ``friction`` given with them
    warns, saying so; the default (None) and a model without them do not."""
    model, _ = one_box()
    with pytest.warns(UserWarning, match="gives its collisions their own friction"):
        js.SimulationParams.build(model, friction=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        js.SimulationParams.build(model)
        js.SimulationParams.build(model.replace(point_friction=None), friction=0.9)


def test_randomised_friction_scales_the_points_own():
    """Domain randomisation's friction factor scales a model's point frictions with its law's."""
    model, gravity = one_box()
    world = WorldModel.build([model], dt=DT, gravity=gravity)
    sample = Sample((jnp.ones(model.number_of_links),), (jnp.asarray(2.0),), jnp.asarray(0.0))
    randomised = apply(world, sample)
    np.testing.assert_allclose(np.asarray(randomised.models[0].point_friction), 0.6)
    assert float(randomised.model_params[0].contact.friction) == 2 * float(world.model_params[0].contact.friction)


def test_the_sliding_distance_has_the_gradient_of_central_differences():
    """A box of friction 0.3 slides 0.2 s down the slope from rest; the derivative of its
    distance with respect to its geom's friction (its points') equals central differences
    (forward mode: one program for the values too, compiled in less than reverse mode's;
    reverse mode through the contacts and the friction is ``test_sim_gradients.py``'s)."""
    model, gravity = one_box()
    params = js.SimulationParams.build(model, dt=DT, gravity=gravity, max_penetration=MAX_PENETRATION)
    state = js.State.build(model, base_position=[0.0, 0.3, 0.05 - MAX_PENETRATION * math.cos(TILT)])
    torques = jnp.zeros((100, model.dofs))

    def distance(friction):
        moved = model.replace(point_friction=jnp.full_like(model.point_friction, friction))
        return js.rollout(moved, state, torques, params=params)[0].base_position[0]

    value_and_gradient = jax.jit(lambda mu: jax.jvp(distance, (mu,), (jnp.ones_like(mu),)))
    mu, step = jnp.asarray(0.3), 1e-5
    value, gradient = value_and_gradient(mu)
    central = (value_and_gradient(mu + step)[0] - value_and_gradient(mu - step)[0]) / (2 * step)
    assert float(value) > 0.005
    assert float(gradient) == pytest.approx(float(central), rel=1e-7)
    # Less than if it had slid from the start, as g (sin - mu cos) t^2 / 2: its contacts first stick.
    assert -0.5 * G * math.cos(TILT) * 0.2**2 < float(gradient) < 0
