"""The command line, in-process (jaxsim_like.cli.main): info and simulate on every shipped model,
the recordings simulate writes, and the bench table."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import cli
from jaxsim_like.recording import Recording

SHIPPED = js.models.available()


def test_every_shipped_model_is_tested():
    assert set(SHIPPED) == {"cart_pole", "humanoid", "pendulum", "quadruped"}


@pytest.mark.parametrize("name", SHIPPED)
def test_info(name, capsys):
    assert cli.main(["info", name]) == 0
    out = capsys.readouterr().out
    model = js.load_model(js.models.path(name))
    assert f"model        {model.name}" in out
    assert f"joints/DoFs  {model.dofs}" in out
    assert f"{float(model.total_mass):.4f} kg" in out
    for link in model.link_names:
        assert link in out


def test_info_of_a_missing_model_is_an_error(capsys):
    assert cli.main(["info", "no_such_robot"]) == 2
    assert "no shipped model named 'no_such_robot'" in capsys.readouterr().err


@pytest.mark.parametrize("name", SHIPPED)
def test_simulate_writes_a_recording(name, tmp_path, capsys):
    out = tmp_path / f"{name}.npz"
    assert cli.main(["simulate", name, "--duration", "0.2", "--dt", "0.001", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "finite       True" in text and f"saved        {out}" in text
    model = js.load_model(js.models.path(name))
    recording = Recording.load(out)
    assert recording.joint_positions.shape == (1, 200, model.dofs)
    assert recording.base_position.shape == (1, 200, 3)
    assert recording.contact_forces.shape == (1, 200, len(model.point_link), 3)
    np.testing.assert_allclose(recording.time, 0.001 * np.arange(1, 201))
    assert recording.joint_names == model.joint_names and recording.link_names == model.link_names
    assert recording.metadata["model"] == model.name and recording.metadata["batch"] == 1
    assert np.isfinite(recording.base_position).all()
    if model.floating_base:  # dropped from 0.5 m: it fell for 0.2 s
        fall = recording.base_position[0, 0, 2] - recording.base_position[0, -1, 2]
        np.testing.assert_allclose(fall, 0.5 * 9.81 * 0.2**2, rtol=0.05)


def test_simulate_a_batch_round_trip(tmp_path, capsys):
    out = tmp_path / "batch.npz"
    assert cli.main(["simulate", "cart_pole", "--duration", "0.05", "--dt", "0.001", "--batch", "3", "--out", str(out)]) == 0
    capsys.readouterr()
    recording = Recording.load(out)
    assert recording.joint_positions.shape == (3, 50, 2)
    # Perturbed joint positions: the worlds differ.
    assert np.ptp(recording.joint_positions[:, 0], axis=0).max() > 0
    again = tmp_path / "again.npz"
    recording.save(again)
    reloaded = Recording.load(again)
    for field in ("time", "base_position", "joint_positions", "joint_torques", "contact_forces"):
        np.testing.assert_array_equal(getattr(reloaded, field), getattr(recording, field))
    assert reloaded.metadata == recording.metadata


def test_bench_prints_a_table(capsys):
    argv = ["bench", "--model", "pendulum", "--batches", "4", "--steps", "5", "--chunk", "2", "--repeats", "1"]
    assert cli.main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("jaxsim-like bench:") and "steps/s" in lines[1]
    rows = [line.split() for line in lines[2:]]
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("step", "1", "-"),
        ("rollout", "1", "-"),
        ("batch", "4", "vmap"),
        ("batch", "4", "chunked/2"),
    ]
    for row in rows:
        assert float(row[4]) >= 0 and float(row[5].replace(",", "")) > 0


def test_bench_rejects_bad_sizes(capsys):
    assert cli.main(["bench", "--model", "pendulum", "--batches", "0"]) == 2
    assert re.search("must be positive", capsys.readouterr().err)


DEFECT = str(Path(__file__).resolve().parents[1] / "assets" / "defects" / "cad_triangle_inequality.urdf")


def test_info_base_switches(capsys):
    assert cli.main(["info", "pendulum", "--floating-base"]) == 0
    assert "base         floating" in capsys.readouterr().out
    assert cli.main(["info", "quadruped", "--fixed-base"]) == 0
    assert "base         fixed" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["info", "pendulum", "--fixed-base", "--floating-base"])


def test_load_warnings_are_printed_and_strict_makes_them_errors(capsys):
    assert cli.main(["info", DEFECT]) == 0
    captured = capsys.readouterr()
    assert "model        cad_inertias" in captured.out
    assert re.search(r"^jaxsim-like: warning: .*cad_triangle_inequality\.urdf:18: <link name=\"shoulder\">: inertia", captured.err, re.M)
    for command in ("info", "simulate"):
        assert cli.main([command, DEFECT, "--strict"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("jaxsim-like: error: ") and "cad_triangle_inequality.urdf:18" in err and "triangle inequality" in err


@pytest.mark.parametrize(("flags", "expected"), [([], (None, False)), (["--fixed-base", "--strict"], (False, True)), (["--floating-base"], (True, False))])
def test_simulate_passes_the_loading_options(flags, expected, monkeypatch, capsys):
    seen = []

    def load(source, floating_base, strict):
        seen.append((floating_base, strict))
        raise js.ModelLoadError("stop here", file=source)

    monkeypatch.setattr(cli, "_load", load)
    assert cli.main(["simulate", "pendulum", *flags]) == 2
    assert seen == [expected] and "stop here" in capsys.readouterr().err
