"""What an MJCF file asks MuJoCo to simulate and the model leaves out is told at load time, located
(jaxsim_like.parsers.mjcf_omissions): a flex is an error; the world body's geoms that bodies touch
and that are not the terrain (its floor, boxes and planes), unread shapes, surface velocities and
plugins warn; read as one model, which has no terrain, a floor off z = 0 and the terrain's boxes
warn too."""

from __future__ import annotations

import warnings

import pytest

from jaxsim_like.parsers import ModelLoadError, ModelLoadWarning, parse_mjcf, parse_mjcf_world

pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

BOX = '<body name="box" pos="0 0 1"><freejoint/><geom name="box" type="box" size="0.1 0.1 0.1"/></body>'


def _warnings(xml: str, world: bool = True) -> list[tuple[int | None, str, str]]:
    """The (line, element, reason) of each ModelLoadWarning of loading ``xml`` as a world, or
    as one model."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (parse_mjcf_world if world else parse_mjcf)(xml)
    return [(w.message.line, w.message.element, w.message.reason) for w in caught if issubclass(w.category, ModelLoadWarning)]


def test_a_flex_is_an_error_at_its_element():
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
<flexcomp name="cloth" type="grid" count="4 4 1" spacing=".1 .1 .1" pos="0 0 1" radius=".01" dim="2" mass="1"/>
</worldbody></mujoco>"""
    with pytest.raises(ModelLoadError) as raised:
        parse_mjcf_world(xml)
    assert (raised.value.line, raised.value.element) == (2, '<flexcomp name="cloth">')
    assert raised.value.reason == "flex 'cloth' (a deformable body of 16 vertices) is not supported yet"


def test_world_geoms_that_are_not_the_terrain_warn_once_and_those_no_body_touches_do_not():
    xml = f"""<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
<geom name="table" type="box" size=".5 .5 .02" pos="0 0 .7"/>
<geom name="wall" type="plane" size="1 1 .1" pos="2 0 0" zaxis="-1 0 0"/>
<geom name="ball" type="sphere" size=".1" pos="0 2 0"/><geom name="pole" type="capsule" size=".1 .5" pos="0 -2 0"/>
<geom name="marker" type="sphere" size=".1" pos="0 3 0" contype="0" conaffinity="0"/>
{BOX}</worldbody></mujoco>"""
    assert _warnings(xml) == [(4, '<geom name="ball">',
                               "2 geom(s) of the world body that bodies touch are not represented: 'ball' (sphere), 'pole' (capsule); "
                               "bodies pass through them (the world body's floor, boxes and planes are the terrain, "
                               "WorldDescription.terrain)")]
    assert _warnings(xml, world=False)[1] == (2, '<geom name="table">',
                                              "2 box(es) and plane(s) of the world body are static boxes of the terrain of load_world's "
                                              "description (WorldDescription.terrain, for Terrain.of), which load_model leaves out: "
                                              "'table' (box), 'wall' (plane)")


def test_a_floor_off_zero_is_the_worlds_ground_and_load_model_tells_it():
    xml = f'<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1" pos="0 0 -0.05"/>{BOX}</worldbody></mujoco>'
    assert _warnings(xml) == []
    assert _warnings(xml, world=False) == [(1, '<geom name="floor">',
                                            "the floor 'floor' is at z = -0.05 m: load_world's description has it "
                                            "(WorldDescription.terrain, for Terrain.of); a world built without it has the plane z = 0")]
    no_contacts = xml.replace("<worldbody>", '<option><flag contact="disable"/></option><worldbody>')
    assert _warnings(no_contacts, world=False) == [] and parse_mjcf_world(no_contacts).terrain is None


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
            "through them (the world body's floor, boxes and planes are the terrain, WorldDescription.terrain)") in found
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
