"""Plugins and elements that SDFormat does not define are skipped with one located warning per
kind and file (:mod:`jaxsim_like.parsers.sdf_elements`); custom (namespaced) elements and
defined but unused ones (sensors, lights) load silently, and so does Gazebo's physics system,
whose work (stepping the physics) every simulation here does."""

from __future__ import annotations

import warnings

import pytest

from jaxsim_like.parsers.errors import ModelLoadWarning
from jaxsim_like.parsers.sdf import parse_sdf, parse_sdf_world

WORLD = """<sdf version="1.9" xmlns:gz="http://gazebosim.org/schema"><world name="w">
  <plugin name="physics" filename="gz-sim-physics-system"/>
  <plugin name="sensors" filename="gz-sim-sensors-system"/>
  <gz:custom>kept silently</gz:custom>
  <model name="m">
    <plugin name="controller" filename="libcontroller.so"/>
    <link name="a"><contact><lateral_friction>1</lateral_friction></contact>
      <sensor name="imu" type="imu"/><light name="lamp" type="point"/></link>
    <link name="b"><contact/><pose>0 0 1 0 0 0</pose></link>
    <joint name="j" type="revolute"><parent>a</parent><child>b</child><axsi><xyz>0 1 0</xyz></axsi></joint>
  </model>
</world></sdf>"""


def test_plugins_and_unknown_elements_warn_once_per_kind():
    with pytest.warns(ModelLoadWarning) as caught:
        parse_sdf_world(WORLD)
    found = {(w.message.reason, w.message.line) for w in caught if isinstance(w.message, ModelLoadWarning)}
    assert found == {
        ("plugins are not run: <plugin> ignored (2 in this file)", 3),
        ("<contact> is not an SDFormat element of <link>: ignored (2 in this file)", 7),
        ("<axsi> is not an SDFormat element of <joint>: ignored", 10),
    }


def test_custom_and_unused_elements_load_silently():
    source = """<sdf version="1.9" xmlns:gz="http://gazebosim.org/schema"><model name="m"><gz:x/>
      <link name="a"><sensor name="s" type="imu"/><light name="l" type="point"/></link></model></sdf>"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_sdf(source)


def test_an_included_file_warns_at_its_own_lines(tmp_path):
    (tmp_path / "part.sdf").write_text(
        '<sdf version="1.9"><model name="part">\n<link name="l"/>\n<plugin name="p" filename="x.so"/>\n</model></sdf>'
    )
    (tmp_path / "world.sdf").write_text('<sdf version="1.9"><world name="w"><include><uri>part.sdf</uri></include></world></sdf>')
    with pytest.warns(ModelLoadWarning, match="<plugin> ignored") as caught:
        parse_sdf_world(tmp_path / "world.sdf")
    (warning,) = [w.message for w in caught if isinstance(w.message, ModelLoadWarning)]
    assert warning.file.endswith("part.sdf") and warning.line == 3
