"""The ways to a view: jaxsim-like view (with and without a recording), simulate --html, and
Simulator.gui() writing the current world without a display."""

from __future__ import annotations

import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import api, cli
from jaxsim_like.recording import Recording
from jaxsim_like.viewer.page import decode, embedded_data


def test_view_a_shipped_model(tmp_path, capsys):
    out = tmp_path / "humanoid.html"
    assert cli.main(["view", "humanoid", "--out", str(out)]) == 0
    assert f"wrote        {out}" in capsys.readouterr().out
    data = embedded_data(out.read_text())
    assert data["times"] == [0.0] and data["models"][0]["name"] == "humanoid"
    assert {s["type"] for s in data["models"][0]["shapes"]} == {"box", "sphere", "cylinder"}


def test_simulate_html_and_view_of_its_recording(tmp_path, capsys):
    page, run = tmp_path / "run.html", tmp_path / "run.npz"
    arguments = ["simulate", "pendulum", "--duration", "0.2", "--dt", "0.01", "--batch", "2", "--integrator", "semi_implicit_euler"]
    arguments += ["--out", str(run), "--html", str(page)]
    assert cli.main(arguments) == 0
    assert f"viewed       {page}" in capsys.readouterr().out
    data = embedded_data(page.read_text())
    recording = Recording.load(run)
    assert data["worlds"] == 2 and len(data["times"]) == 6  # samples 0, 4, ..., 16 of 20 at 100 Hz, and the last
    model = js.load_model(js.models.path("pendulum"))
    poses = decode(data["models"][0]["poses"]).reshape(2, 6, model.number_of_links, 7)
    np.testing.assert_allclose(data["times"][-1], recording.time[-1])
    assert not np.allclose(poses[:, 0], poses[:, -1], atol=1e-3)  # the pendulum swung
    again = tmp_path / "again.html"
    assert cli.main(["view", "pendulum", "--recording", str(run), "--out", str(again), "--fps", "40"]) == 0
    assert len(embedded_data(again.read_text())["times"]) == 8  # every third sample, and the last


@pytest.mark.parametrize("content", [None, b"", b"not a zip file"])
def test_a_recording_that_cannot_be_read_is_an_error(tmp_path, capsys, content):
    path = tmp_path / "other.npz"
    if content is not None:
        path.write_bytes(content)
    assert cli.main(["view", "pendulum", "--recording", str(path), "--out", str(tmp_path / "v.html")]) == 2
    assert f"jaxsim-like: error: {path}: cannot read the recording" in capsys.readouterr().err


def test_gui_writes_the_world_and_says_where(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("JAXSIM_LIKE_GUI_FILE", str(tmp_path / "gui.html"))
    simulator = api.Simulator(step_size=0.01)
    assert not simulator.gui()  # not initialized: False, and the reason is logged
    assert simulator.initialize()
    world = simulator.get_world()
    assert world.insert_model(api.get_ground_plane())
    assert world.insert_model(js.models.path("pendulum"), api.Pose((0, 0, 0.2)), "robot")
    robot = world.get_model("robot")
    assert robot.reset_joint_positions([1.0])
    assert simulator.gui()
    assert str(tmp_path / "gui.html") in capsys.readouterr().err
    data = embedded_data((tmp_path / "gui.html").read_text())
    assert [m["name"] for m in data["models"]] == ["ground_plane", "pendulum"]
    links = data["models"][1]["links"]
    poses = decode(data["models"][1]["poses"]).reshape(len(links), 7)
    expected = [robot.get_link(name).position() for name in links]
    np.testing.assert_allclose(poses[:, :3], expected, atol=1e-6)  # the reset, applied
    assert not np.allclose(poses[:, :3], js.load_model(js.models.path("pendulum")).base_transform[:3, 3])
    assert "plane" in {s["type"] for s in data["models"][0]["shapes"]}


@pytest.fixture(autouse=True)
def _no_browser(monkeypatch):
    """Never start a browser, whatever the machine has."""
    monkeypatch.setattr("webbrowser.open", lambda url: False)
