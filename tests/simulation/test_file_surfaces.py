"""SDF collisions' ``<surface><friction><ode><mu>`` and URDF's ``<gazebo reference><mu1>`` (issue
31): read into the collisions' surfaces, they act on the terrain contacts and between collisions
of different files (the smaller between two SDF or URDF surfaces, as Gazebo combines them; the
larger where a side is MJCF, as MuJoCo combines geoms). Under gravity tilted by 0.35 rad
(``tan = 0.365``): a 0.1 m box on the floor slides with ``g (sin - mu cos)`` at ``mu = 0.3`` and
sticks at ``mu = 1``, in both formats (one world, one compiled rollout); boxes of 0.2 on other
files' tables: an MJCF one sticks on 0.6, an SDF one slides with 0.1 (a second world; one
world of both costs as much to compile and run). A file without friction carries no surfaces;
bad coefficients are located errors; domain randomisation scales the pairs' friction;
``jaxsim-like info`` lists the file's friction."""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.cli import summary_lines
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.loading import ContactSampling
from jaxsim_like.parsers import ModelLoadError, ModelLoadWarning, parse_sdf, parse_urdf
from jaxsim_like.simulation.world import WorldModel, world_rollout
from jaxsim_like.tasks.randomisation import Sample, apply

TILT = 0.35  # [rad]
G = 9.81  # [m/s^2]
DT = 0.002  # [s]
MAX_PENETRATION = 3e-4  # [m]
SECONDS, QUARTERS = 1.0, 4

SDF = """<sdf version="1.9"><model name="{name}"><link name="body">
<inertial><mass>1</mass><inertia><ixx>0.00167</ixx><iyy>0.00167</iyy><izz>0.00167</izz></inertia></inertial>
<collision name="collision"><geometry><box><size>0.1 0.1 0.1</size></box></geometry>{surface}</collision>
</link></model></sdf>"""
URDF = """<robot name="{name}"><link name="body">
<inertial><mass value="1"/><inertia ixx="0.00167" iyy="0.00167" izz="0.00167" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>{gazebo}</robot>"""


def sdf(name: str, mu: float | None) -> str:
    surface = "" if mu is None else f"<surface><friction><ode><mu>{mu}</mu><mu2>{mu}</mu2></ode></friction></surface>"
    return SDF.format(name=name, surface=surface)


def urdf(name: str, mu: float | None) -> str:
    gazebo = "" if mu is None else f'<gazebo reference="body"><mu1>{mu}</mu1><mu2>{mu}</mu2></gazebo>'
    return URDF.format(name=name, gazebo=gazebo)


BOXES = {"sdf_03": (sdf, 0.3), "sdf_1": (sdf, 1.0), "urdf_03": (urdf, 0.3), "urdf_1": (urdf, 1.0)}


def slope_positions(world: WorldModel, starts: list) -> tuple[list[list[float]], float]:
    """The models' base x [m] at the end of each of ``QUARTERS`` quarters of ``SECONDS`` in
    ``world`` from ``starts``, and the quarters' length [s]."""
    quarter = jax.jit(lambda s: world_rollout(world, s, None, int(round(SECONDS / DT)) // QUARTERS)[0])
    state, x = world.initial_state(starts), []
    for _ in range(QUARTERS):
        state = quarter(state)
        x.append([float(s.base_position[0]) for s in state.states])
    return x, SECONDS / QUARTERS


def test_the_files_friction_is_each_points_and_none_without_it():
    for name, (write, mu) in BOXES.items():
        model = js.load_model(write(name, mu))
        np.testing.assert_array_equal(np.asarray(model.point_friction), np.full(len(model.point_link), mu))
        assert model.collision_rules.surfaces == (("collision" if write is sdf else "body_collision_0", mu, 0.0, 0.0, 3, 0),)
    for write in (sdf, urdf):
        model = js.load_model(write("plain", None))
        assert model.collision_rules is None and model.point_friction is None and model.point_margin is None


def test_a_box_slides_at_g_sin_minus_mu_cos_or_sticks(figures):
    """Over the second half of 1 s, each box's acceleration down the slope is ``g (sin - mu
    cos)`` within 1 % at ``mu = 0.3``; at ``mu = 1`` it stays within 1 mm."""
    models = [js.load_model(write(name, mu)) for name, (write, mu) in BOXES.items()]
    gravity = (G * math.sin(TILT), 0.0, -G * math.cos(TILT))
    # 0.3 m apart across the slope, sliding down it: the boxes never touch each other (no pairs).
    world = WorldModel.build(models, dt=DT, gravity=gravity, max_penetration=MAX_PENETRATION, collisions=False)
    starts = [js.State.build(m, base_position=[0.0, 0.3 * k, 0.05 - MAX_PENETRATION]) for k, m in enumerate(models)]
    x, h = slope_positions(world, starts)
    for k, (name, (_, mu)) in enumerate(BOXES.items()):
        found = (x[-1][k] - 2 * x[-2][k] + x[-3][k]) / h**2
        expected = G * (math.sin(TILT) - mu * math.cos(TILT))
        figures(f"file friction on a 0.35 rad slope: {name} acceleration", found, "m/s^2")
        if expected > 0:
            assert found == pytest.approx(expected, rel=0.01), name
        else:
            assert abs(x[-1][k]) < 1e-3, name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (sdf("bad", -0.2), r"<mu>: a friction coefficient must be a finite number >= 0, got -0.2"),
        (sdf("bad", "x"), r"<mu>: a friction coefficient must be a number, got 'x'"),
        (urdf("bad", -1), r"<mu1>: a friction coefficient must be a finite number >= 0, got -1"),
        (urdf("bad", "0.3 0.4"), r"<mu1>: a friction coefficient must be a number, got '0.3 0.4'"),
    ],
    ids=["sdf_negative", "sdf_word", "urdf_negative", "urdf_two"],
)
def test_bad_coefficients_are_located_errors(text: str, message: str):
    with pytest.raises(ModelLoadError, match=r"<string>:\d+: " + message):
        (parse_sdf if text.startswith("<sdf") else parse_urdf)(text)


def test_a_second_coefficient_that_differs_warns_located():
    text = SDF.format(name="b", surface="<surface><friction><ode><mu>0.3</mu><mu2>0.5</mu2></ode></friction></surface>")
    with pytest.warns(ModelLoadWarning, match=r"<string>:\d+: <ode>: mu2=0.5 differs from mu=0.3: the friction cone is isotropic here"):
        description = parse_sdf(text)
    assert description.links[0].collisions[0].friction == 0.3
    with pytest.warns(ModelLoadWarning, match=r"<string>:\d+: <gazebo>: mu2=0.1 differs from mu1=0.3"):
        parse_urdf(URDF.format(name="b", gazebo='<gazebo reference="body"><mu1>0.3</mu1><mu2>0.1</mu2></gazebo>'))


def test_collisions_of_one_name_on_several_links_are_named_by_their_link():
    """SDF names collisions per link: in a file with friction, those sharing a name across links
    are ``link::name`` in the rules, and parent and child links still never touch (the welds)."""
    text = """<sdf version="1.9"><model name="two">
    <link name="a"><collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry>
      <surface><friction><ode><mu>0.4</mu></ode></friction></surface></collision></link>
    <link name="b"><pose>0 0 0.15 0 0 0</pose><collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision></link>
    <link name="c"><pose>0 0 0.3 0 0 0</pose><collision name="only"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision></link>
    <joint name="ab" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 1 0</xyz></axis></joint>
    <joint name="bc" type="fixed"><parent>b</parent><child>c</child></joint></model></sdf>"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelLoadWarning)
        description = parse_sdf(text)
    rules = description.collision_rules
    assert [c.name for link in description.links for c in link.collisions] == ["a::c", "b::c", "only"]
    assert rules.surfaces == (("a::c", 0.4, 0.0, 0.0, 3, 0),)
    assert not rules.touch("a", "a::c", "b", "b::c") and not rules.touch("a", "a::c", "c", "only")
    assert not rules.touch("b", "b::c", "c", "only")


PYBULLET_BOX = """<robot name="{name}"><link name="body"><contact><lateral_friction value="{mu}"/><rolling_friction value="0"/></contact>
<inertial><mass value="1"/><inertia ixx="0.00167" iyy="0.00167" izz="0.00167" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>{gazebo}</robot>"""


def test_pybullets_lateral_friction_combines_as_bullet_does():
    """PyBullet's ``<contact><lateral_friction value>``: each point's friction against the
    terrain, the product of two such collisions' between models (Bullet's rule), Gazebo's
    ``<mu1>`` first where a file gives both (then Gazebo's rule, the smaller; its value as an
    attribute, as pybullet_data's racecar writes it and sdformat reads it)."""
    boxes = [js.load_model(PYBULLET_BOX.format(name=name, mu=mu, gazebo="")) for name, mu in (("a", 0.5), ("b", 0.4))]
    np.testing.assert_array_equal(np.asarray(boxes[0].point_friction), np.full(len(boxes[0].point_link), 0.5))
    assert boxes[0].collision_rules.friction_rule == "product"
    assert [p.friction for p in WorldModel.build(boxes, dt=DT).collision.pairs] == [pytest.approx(0.2, rel=1e-15)]
    both = parse_urdf(PYBULLET_BOX.format(name="c", mu=0.5, gazebo='<gazebo reference="body"><mu1 value="0.3"/></gazebo>'))
    assert both.collision_rules.surfaces == (("body_collision_0", 0.3, 0.0, 0.0, 3, 0),)
    assert both.collision_rules.friction_rule == "smaller"
    with pytest.raises(ModelLoadError, match=r"<lateral_friction>: a friction coefficient must be a number, got 'high'"):
        parse_urdf(PYBULLET_BOX.format(name="d", mu="high", gazebo=""))


TABLE = """<sdf version="1.9"><model name="{name}"><static>true</static><pose>0 {y} 0.45 0 0 0</pose><link name="top">
<collision name="top"><geometry><box><size>2.2 0.6 0.1</size></box></geometry>
<surface><friction><ode><mu>{mu}</mu></ode></friction></surface></collision></link></model></sdf>"""
MJCF_BOX = """<mujoco><worldbody><body name="box"><freejoint/>
<geom name="box" type="box" size=".05 .05 .05" mass="1" friction="{mu}"/></body></worldbody></mujoco>"""


def test_a_box_on_another_files_table_takes_gazebos_or_mujocos_friction(figures):
    """Boxes of friction 0.2 on static SDF tables of other files, on the 0.35 rad slope: an MJCF
    box on a table of 0.6 sticks (MuJoCo's rule, the larger: 0.6 > tan 0.35); an SDF box on a
    table of 0.1 slides with 0.1 (Gazebo's rule between two SDF or URDF surfaces, the smaller;
    the law's default 0.5 would hold it), within 2 % over the second half of 1 s."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelLoadWarning)
        models = [js.load_model(TABLE.format(name="grippy", y=0.0, mu=0.6)), js.load_model(MJCF_BOX.format(mu=0.2)),
                  js.load_model(TABLE.format(name="slippy", y=1.0, mu=0.1)), js.load_model(sdf("sdf_box", 0.2))]
    gravity = (G * math.sin(TILT), 0.0, -G * math.cos(TILT))
    world = WorldModel.build(models, dt=DT, gravity=gravity)
    # MJCF box-grippy 0.6 and MJCF box-slippy 0.2 (the larger), SDF box-grippy 0.2 and SDF box-slippy 0.1 (the smaller)
    assert {p.friction for p in world.collision.pairs} == {0.1, 0.2, 0.6}
    starts = [None if not m.floating_base else js.State.build(m, base_position=[-0.8, y, 0.55]) for m, y in zip(models, (0, 0, 0, 1.0))]
    starts = [js.State.build(m) if s is None else s for m, s in zip(models, starts)]
    x, h = slope_positions(world, starts)
    sliding = (x[-1][3] - 2 * x[-2][3] + x[-3][3]) / h**2
    figures("SDF box of friction 0.2 on another SDF file's table of 0.1, 0.35 rad slope: acceleration", sliding, "m/s^2")
    assert sliding == pytest.approx(G * (math.sin(TILT) - 0.1 * math.cos(TILT)), rel=0.02)
    assert abs(x[-1][1] + 0.8) < 1e-3


def test_randomised_friction_scales_the_tables_pairs():
    """Domain randomisation's friction factors scale the table's pairs' friction too: a contact
    between the box (factor 3) and the table (factor 0.5) of pair friction 0.1 gets 0.3, the
    larger factor; a contact without a pair keeps the law's (scaled with the models' laws)."""
    models = [js.load_model(TABLE.format(name="slippy", y=0.0, mu=0.1)), js.load_model(sdf("sdf_box", 0.2))]
    world = WorldModel.build(models, dt=DT)
    randomised = apply(world, Sample(tuple(jnp.ones(m.number_of_links) for m in models), (jnp.asarray(0.5), jnp.asarray(3.0)), jnp.asarray(0.0)))
    pairs, table = randomised.explicit_pairs, randomised.collision
    slots = np.asarray(table.explicit_slots)
    slot = jnp.asarray([int(np.flatnonzero(slots >= 0)[0]), len(slots)])  # a pair's slot, and none (padding)
    link_a, link_b, law = jnp.asarray([0, 0]), jnp.asarray([1, 1]), jnp.full(2, 0.25)
    np.testing.assert_allclose(np.asarray(pairs.contact_friction(table, link_a, link_b, slot, law)), [0.3, 0.25], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(world.explicit_pairs.contact_friction(table, link_a, link_b, slot, law)), [0.1, 0.25], rtol=1e-15)
    assert float(randomised.model_params[1].contact.friction) == 3 * float(world.model_params[1].contact.friction)


def test_info_lists_the_files_friction():
    lines = summary_lines(js.load_model(sdf("b", 0.3)))
    assert "friction     the file's, 0.3, on 8 of 8 points" in lines
    assert not any(line.startswith("friction") for line in summary_lines(js.load_model(sdf("b", None))))


def test_a_gazebo_friction_for_no_link_warns_located():
    text = URDF.format(name="b", gazebo='<gazebo reference="wheel"><mu1>0.3</mu1></gazebo>')
    with pytest.warns(ModelLoadWarning, match=r"<string>:\d+: <gazebo>: mu1 of 'wheel', which is not a link of the robot: not read"):
        description = parse_urdf(text)
    assert description.collision_rules is None


def test_a_planes_friction_is_not_read():
    """Gazebo's stock ground plane (``mu`` 100, ``mu2`` 50): the terrain's law is the simulation's,
    so its friction is neither read nor warned about."""
    text = """<sdf version="1.9"><model name="ground_plane"><static>true</static><link name="link"><collision name="collision">
    <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
    <surface><friction><ode><mu>100</mu><mu2>50</mu2></ode></friction></surface></collision></link></model></sdf>"""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelLoadWarning)
        description = parse_sdf(text)
    assert description.links[0].collisions[0].friction is None and description.collision_rules is None


BITMASK_BOX = """<model name="{name}"><pose>{x} 0 0.05 0 0 0</pose><link name="body">
<inertial><mass>1</mass><inertia><ixx>0.00167</ixx><iyy>0.00167</iyy><izz>0.00167</izz></inertia></inertial>
<collision name="collision"><geometry><box><size>0.1 0.1 0.1</size></box></geometry>{contact}</collision></link></model>"""


def _bitmask_world(boxes: dict[str, str]) -> list[js.Model]:
    """The models of an SDF world of 0.1 m boxes named by ``boxes``, each with its
    ``<surface><contact>`` content (empty: none), from a shared ground plane."""
    models = "".join(BITMASK_BOX.format(name=name, x=0.2 * i, contact=f"<surface><contact>{c}</contact></surface>" if c else "")
                     for i, (name, c) in enumerate(boxes.items()))
    world = js.load_world(f'<sdf version="1.11"><world name="w">{models}</world></sdf>')
    return [build_model(description, collidable_points=ContactSampling().points) for description in world.models]


def _touching(models: list[js.Model]) -> set[frozenset[str]]:
    """The pairs of models (by name) that the world's collision table lets touch."""
    owner = [model.name for model in models for _ in model.shape_kind]
    table = WorldModel.build(models, dt=DT).collision
    return {frozenset((owner[a], owner[b])) for g in table.groups for a, b in zip(g.first, g.second)}


def test_gazebo_collide_and_category_bitmasks_filter_the_pairs():
    """SDF ``<collide_bitmask>`` and ``<category_bitmask>`` as Gazebo's engines read them: two
    collisions touch when ``category_a & collide_b`` or ``category_b & collide_a`` is non-zero, the
    category defaulting to the collide bitmask and both to 0xffff (gz-physics' ``shapes_bitmask``
    and ``shapes_category_bitmask`` worlds: a filtered box falls through the base, a colliding one
    rests on it; boxes of one category never touch, of categories that name each other do)."""
    bitmask = lambda value: f"<collide_bitmask>{value}</collide_bitmask>"  # noqa: E731
    models = _bitmask_world({"base": bitmask("0x01"), "filtered": bitmask("0x02"), "colliding": bitmask("0x03"), "plain": ""})
    assert _touching(models) == {frozenset(pair) for pair in (("base", "colliding"), ("filtered", "colliding"), ("base", "plain"),
                                                              ("filtered", "plain"), ("colliding", "plain"))}
    both = lambda category, collide: f"<category_bitmask>{category}</category_bitmask>{bitmask(collide)}"  # noqa: E731
    models = _bitmask_world({"a0": both(1, 6), "a1": both(1, 6), "b0": both(2, 5), "c0": both(4, 3), "none": bitmask(0)})
    assert _touching(models) == {frozenset(pair) for pair in (("a0", "b0"), ("a1", "b0"), ("a0", "c0"), ("a1", "c0"), ("b0", "c0"))}
    rules = models[-1].collision_rules
    assert rules.filter("collision") == (0, 0) and not rules.touches_terrain("collision")  # no bit: not even the ground
    assert models[0].collision_rules.touches_terrain("collision")
    with pytest.raises(ModelLoadError, match=r"<collide_bitmask>: a bitmask must be within 0 and 0xffff, got 0x10000"):
        _bitmask_world({"big": bitmask("0x10000")})
