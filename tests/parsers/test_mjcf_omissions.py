"""What an MJCF file asks MuJoCo to simulate and the model leaves out is told at load time, located
(jaxsim_like.parsers.mjcf_omissions): a flex is an error; the world's geoms that bodies touch
other than its floors, a floor off z = 0, unread shapes, surface velocities and plugins warn."""

from __future__ import annotations

import warnings

import pytest

from jaxsim_like.parsers import ModelLoadError, ModelLoadWarning, parse_mjcf_world

pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

BOX = '<body name="box" pos="0 0 1"><freejoint/><geom name="box" type="box" size="0.1 0.1 0.1"/></body>'


def _warnings(xml: str) -> list[tuple[int | None, str, str]]:
    """The (line, element, reason) of each ModelLoadWarning of loading ``xml`` as a world."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_mjcf_world(xml)
    return [(w.message.line, w.message.element, w.message.reason) for w in caught if issubclass(w.category, ModelLoadWarning)]


def test_a_flex_is_an_error_at_its_element():
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
<flexcomp name="cloth" type="grid" count="4 4 1" spacing=".1 .1 .1" pos="0 0 1" radius=".01" dim="2" mass="1"/>
</worldbody></mujoco>"""
    with pytest.raises(ModelLoadError) as raised:
        parse_mjcf_world(xml)
    assert (raised.value.line, raised.value.element) == (2, '<flexcomp name="cloth">')
    assert raised.value.reason == "flex 'cloth' (a deformable body of 16 vertices) is not supported yet"


def test_world_geoms_that_bodies_touch_warn_once_and_those_they_cannot_touch_do_not():
    xml = f"""<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
<geom name="table" type="box" size=".5 .5 .02" pos="0 0 .7"/>
<geom name="wall" type="plane" size="1 1 .1" pos="2 0 0" zaxis="-1 0 0"/>
<geom name="marker" type="sphere" size=".1" pos="0 2 0" contype="0" conaffinity="0"/>
{BOX}</worldbody></mujoco>"""
    assert _warnings(xml) == [(2, '<geom name="table">',
                               "2 geom(s) of the world body that bodies touch are not represented: 'table' (box), 'wall' (plane); bodies "
                               "pass through them (only the planes facing up, the floors, are the terrain; a static box can be given to "
                               "the world as a terrain box, Terrain.with_boxes)")]


def test_a_floor_off_zero_tells_the_terrain_to_build():
    xml = f'<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1" pos="0 0 -0.05"/>{BOX}</worldbody></mujoco>'
    assert _warnings(xml) == [(1, '<geom name="floor">',
                               "the floor 'floor' is at z = -0.05 m, and the terrain is the one a world is built with (default: the plane "
                               "z = 0): build it with Terrain.plane(-0.05) for this floor")]
    assert not _warnings(xml.replace("<worldbody>", '<option><flag contact="disable"/></option><worldbody>'))  # no contacts: no terrain


def test_a_height_field_a_surface_velocity_and_a_plugin_warn():
    xml = f"""<mujoco>
<extension><plugin plugin="mujoco.sdf.torus"><instance name="torus"><config key="radius1" value="0.35"/><config key="radius2" value="0.15"/></instance></plugin></extension>
<asset><hfield name="bumps" nrow="3" ncol="3" size="1 1 .1 .1"/><mesh name="torus"><plugin instance="torus"/></mesh></asset>
<worldbody><geom name="ground" type="hfield" hfield="bumps"/>
<body name="ring" pos="0 0 2"><freejoint/><geom name="ring" type="sdf" mesh="torus"><plugin instance="torus"/></geom></body>
<body name="belt" pos="3 0 .1"><joint type="slide" axis="0 0 1"/><geom name="belt" type="box" size=".5 .5 .05" surfacevel="1 0 0"/></body>
{BOX}</worldbody></mujoco>"""
    found = _warnings(xml)
    assert (4, '<geom name="ground">', "1 geom(s) of the world body that bodies touch are not represented: 'ground' (hfield); bodies pass "
            "through them (only the planes facing up, the floors, are the terrain; a static box can be given to the world as a terrain "
            "box, Terrain.with_boxes)") in found
    assert (5, '<geom name="ring">', "1 geom(s) of a shape not read here (height field, signed distance field) are not collision shapes: "
            "'ring' (sdf): ignored") in found
    assert (6, '<geom name="belt">', "the surface velocity (surfacevel) of 1 geom(s) is not represented: 'belt' (box): ignored") in found
    assert (2, '<plugin plugin="mujoco.sdf.torus">', "MuJoCo plugin 'mujoco.sdf.torus' is not represented: what it adds (passive forces, "
            "collision shapes) is left out") in found
    assert len(found) == 4


def test_an_elasticity_plugin_warns_and_an_actuator_plugin_drops_its_actuators_once():
    cable = """<mujoco><extension><plugin plugin="mujoco.elasticity.cable"/></extension><worldbody>
<composite type="cable" curve="s" count="5 1 1" size="1" offset="0 0 .6" initial="none">
<plugin plugin="mujoco.elasticity.cable"><config key="twist" value="1e7"/><config key="bend" value="4e6"/></plugin>
<joint kind="main"/><geom type="capsule" size=".005" condim="1"/></composite></worldbody></mujoco>"""
    assert _warnings(cable) == [(3, '<plugin plugin="mujoco.elasticity.cable">',
                                 "MuJoCo plugin 'mujoco.elasticity.cable' is not represented: what it adds (passive forces, collision "
                                 "shapes) is left out")]
    pid = """<mujoco><extension><plugin plugin="mujoco.pid"><instance name="pid1"><config key="kp" value="40"/></instance></plugin></extension>
<worldbody><body><joint name="j1" type="slide" axis="0 0 1"/><geom size=".01"/></body></worldbody>
<actuator><plugin joint="j1" plugin="mujoco.pid" instance="pid1"/></actuator></mujoco>"""
    (only,) = _warnings(pid)
    assert only[:2] == (3, "<plugin>") and only[2].startswith("1 actuator(s) of a kind not represented") and only[2].endswith("dropped: #0")
