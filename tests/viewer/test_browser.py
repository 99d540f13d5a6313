"""The exported views in a real browser: headless Chromium (WebGL by SwiftShader) opens the view of
the shipped humanoid and of a batch of four, each at two frames; the page's probe (one flat colour
per link, pixels counted in the page) shows every link with shapes drawn, the frames different and
no script error. The screenshot of each case (the last probed frame, as a user sees it) is kept in
tests/output/viewer/."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import viewer
from jaxsim_like.recording import Recording
from jaxsim_like.viewer import frames
from jaxsim_like.viewer.page import embedded_data

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="the browser tests need Chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)"
)
SHOTS = Path(__file__).resolve().parents[1] / "output" / "viewer"
FRAMES = (0, 40)


def chromium(url: str, profile: Path, *flags: str) -> str:
    """Run headless Chromium on ``url``; its standard output (the DOM with ``--dump-dom``)."""
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
        "--window-size=800,600", "--hide-scrollbars", "--no-first-run", "--mute-audio", f"--user-data-dir={profile}",
        *flags, url,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def element(dom: str, name: str):
    match = re.search(rf'<pre id="{name}">(.*?)</pre>', dom, re.DOTALL)
    assert match is not None, f"no #{name} in the page"
    return json.loads(html.unescape(match.group(1)))


def swinging(model, worlds: int, steps: int = 60, dt: float = 1 / 30) -> Recording:
    """Every joint swinging (0.4 rad, 0.5 Hz, a phase per world) over a base standing still; each
    world's weight carried by its four lowest collidable points."""
    t = dt * np.arange(1, steps + 1)
    phase = np.linspace(0, np.pi, worlds, endpoint=False)[:, None, None]
    joints = 0.4 * np.sin(np.pi * t[None, :, None] + phase + np.arange(model.dofs)) * np.ones((worlds, 1, model.dofs))
    lower, upper = np.asarray(model.position_limit_lower), np.asarray(model.position_limit_upper)
    joints = np.clip(joints, np.maximum(lower, -np.pi), np.minimum(upper, np.pi))
    rest = viewer.resting_state(model)
    base = np.broadcast_to(np.asarray(rest.base_position), (worlds, steps, 3)).copy()
    quaternion = np.broadcast_to(np.asarray(rest.base_quaternion), (worlds, steps, 4)).copy()
    heights = frames.point_positions(model, frames.link_poses(model, base, quaternion, joints))[..., 2]
    base[..., 2] -= heights.min(axis=-1)
    forces = np.zeros((worlds, steps, len(model.point_link), 3))
    lowest = np.argsort(heights, axis=-1)[..., :4]
    np.put_along_axis(forces[..., 2], lowest, float(model.total_mass) * 9.81 / 4, axis=-1)
    zeros = np.zeros((worlds, steps, model.dofs))
    return Recording(
        time=t, base_position=base, base_quaternion=quaternion, base_velocity=np.zeros((worlds, steps, 6)),
        joint_positions=joints, joint_velocities=zeros, joint_torques=zeros, contact_forces=forces,
        joint_names=tuple(model.joint_names), link_names=tuple(model.link_names), point_link=tuple(model.point_link),
    )  # fmt: skip


@pytest.fixture(scope="module")
def humanoid():
    model, description = viewer.load(js.models.path("humanoid"))
    return model, description, swinging(model, 4)


@pytest.mark.parametrize("worlds", [1, 4], ids=["humanoid", "batch"])
def test_every_link_is_drawn_and_frames_differ(humanoid, worlds, tmp_path):
    humanoid, description, recording = humanoid
    chosen = range(worlds)  # the humanoid case: the first world alone
    path = viewer.export_html(tmp_path / "view.html", humanoid, recording, description=description, worlds=chosen)
    data = embedded_data(path.read_text())
    (model,) = data["models"]
    drawn = sorted({shape["link"] for shape in model["shapes"] if shape["group"] == "visual"})
    assert len(drawn) == 15  # the humanoid's links with collision shapes; the others are joint frames
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{'humanoid' if worlds == 1 else 'batch'}.png"
    shot.unlink(missing_ok=True)
    dom = chromium(f"{path.as_uri()}?probe={FRAMES[0]},{FRAMES[1]}", tmp_path / "profile", "--dump-dom", f"--screenshot={shot}")
    assert element(dom, "errors") == []
    probe = element(dom, "probe")
    assert probe["revision"] == "187" and [f["frame"] for f in probe["frames"]] == list(FRAMES)
    prefix = "world {w}/" if worlds > 1 else ""
    for seen in probe["frames"]:
        assert seen["unknown"] == 0 and seen["background"] > 0
        for w in range(worlds):
            for link in drawn:
                label = prefix.format(w=w) + f"humanoid/{model['links'][link]}"
                assert seen["sides"][label] > 0, f"{label} is not visible at frame {seen['frame']}"
        visible = sum(count > 0 for count in seen["pixels"].values())
        assert visible >= 0.75 * worlds * len(drawn)  # from the camera alone, a few may hide behind others
    assert probe["changed"] > 0.002 * probe["size"][0] * probe["size"][1]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
