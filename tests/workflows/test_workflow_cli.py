"""The command line, in-process (jaxsim_like.cli.main): info and simulate on every shipped model,
the recordings simulate writes, and the bench table."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import cli
from jaxsim_like.parsers.shapes import MESH_HULL_VERTICES
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


def test_info_lists_the_loop_closures(capsys):
    four_bar = Path(__file__).resolve().parents[1] / "assets" / "sdf_loops" / "four_bar.sdf"
    assert cli.main(["info", str(four_bar)]) == 0
    out = capsys.readouterr().out
    assert "loop closures (1):\n  pin  hinge  rocker -- coupler\n" in out


def test_info_of_a_missing_model_is_an_error(capsys):
    assert cli.main(["info", "no_such_robot"]) == 2
    assert "no shipped model named 'no_such_robot'" in capsys.readouterr().err


@pytest.mark.parametrize("name", SHIPPED)
def test_simulate_writes_a_recording(name, tmp_path, capsys):
    out = tmp_path / f"{name}.npz"
    assert cli.main(["simulate", name, "--duration", "0.2", "--dt", "0.001", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "finite       1 of 1 world(s)" in text and f"saved        {out} (1 world(s), 200 samples" in text
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
    text = capsys.readouterr().out
    assert "finite       3 of 3 world(s)" in text and re.search(r"^penetration  deepest min \S+ / median \S+ / max \S+ mm", text, re.M)
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

    def load(args):
        seen.append((args.floating_base, args.strict))
        raise js.ModelLoadError("stop here", file=args.model)

    monkeypatch.setattr(cli, "_load", load)
    assert cli.main(["simulate", "pendulum", *flags]) == 2
    assert seen == [expected] and "stop here" in capsys.readouterr().err


FLOATING_WITHOUT_POINTS = """<robot name="bare"><link name="body"><inertial><mass value="1"/>
<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""


@pytest.fixture
def error_cases(tmp_path, monkeypatch):
    """(argv, words the one line of stderr must hold) for inputs refused before any run."""
    bare = tmp_path / "bare.urdf"
    bare.write_text(FLOATING_WITHOUT_POINTS)
    xacro = tmp_path / "robot.urdf.xacro"
    xacro.write_text("<robot/>")
    missing = str(tmp_path / "missing" / "out.npz")
    return [
        (["info", "missing/robot.urdf"], "missing/robot.urdf: no such file"),
        (["info", str(tmp_path)], "is a directory, not a URDF"),
        (["simulate", str(xacro)], "xacro files must be expanded first"),
        (["simulate", str(bare), "--floating-base"], "model 'bare' has no collidable points"),
        (["simulate", "pendulum", "--out", missing], "--out " + missing + ": no such directory"),
        (["simulate", "pendulum", "--plot", str(tmp_path / "nowhere" / "run.png")], "--plot"),
        (["simulate", "pendulum", "--out", str(tmp_path / "run.txt")], "must end in .npz"),
        (["simulate", "pendulum", "--out", str(tmp_path / "run.npz"), "--every", "3"], "--every 3 must divide the number of steps (1000"),
        (["simulate", "pendulum", "--batch", "2", "--out", str(tmp_path / "run.npz"), "--worlds", "0,5"], "--worlds must list indices"),
        (["simulate", "pendulum", "--fields", "joint_positions,speed", "--out", str(tmp_path / "run.npz")], "unknown field(s) speed"),
        (["simulate", "pendulum", "--duration", "0"], "--duration and --dt must be positive"),
        (["simulate", "pendulum", "--duration", "inf"], "--duration and --dt must be positive and finite, got inf"),
        (["simulate", "pendulum", "--duration", "nan"], "must be positive and finite, got nan"),
        (["simulate", "pendulum", "--dt", "inf"], "must be positive and finite"),
        (["simulate", "pendulum", "--duration", "1e9"], "is 5e+11 steps, more than the 2,147,483,647 a run can count"),
    ]


def test_argument_and_path_errors_are_one_line(error_cases, capsys):
    for argv, words in error_cases:
        assert cli.main(argv) == 2, argv
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("jaxsim-like: error: ") and words in lines[0], (argv, captured.err)
        assert captured.out == ""


def test_plot_without_matplotlib_fails_before_the_run(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    monkeypatch.setattr(cli, "_load", lambda args: pytest.fail("the model was loaded before the check"))
    assert cli.main(["simulate", "pendulum", "--plot", str(tmp_path / "run.png")]) == 2
    assert capsys.readouterr().err.strip() == "jaxsim-like: error: --plot needs matplotlib: pip install 'jaxsim_like[plot]'"


def test_mesh_points_zero_is_allowed_and_negative_refused(capsys):
    assert cli.main(["info", "humanoid", "--mesh-points", "0"]) == 0
    assert "model        humanoid" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        cli.main(["info", "humanoid", "--mesh-points", "-1"])
    assert exit_.value.code == 2 and "must be a non-negative integer" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        cli.main(["info", "humanoid", "--mesh-hulls", "3"])
    assert exit_.value.code == 2 and "must be an integer >= 4" in capsys.readouterr().err
    assert cli.main(["info", "humanoid", "--mesh-hulls", "16"]) == 0
    with pytest.raises(SystemExit) as exit_:
        cli.main(["info", "humanoid", "--mesh-hulls", "16", "--mesh-points", "8"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_meshes_are_hulls_unless_points_are_asked_for(capsys):
    """Without options meshes are hulls of the default cap and ellipsoids exact; ``--mesh-points N``
    makes meshes points (no hulls), ``--mesh-hulls V`` hulls of V, ``--ellipsoid-points N``
    ellipsoids N lattice points."""
    def sampling(points, hulls, ellipsoids=None):
        return cli._sampling(argparse.Namespace(mesh_points=points, mesh_hulls=hulls, ellipsoid_points=ellipsoids))

    assert sampling(None, None).hulls == MESH_HULL_VERTICES == 16
    assert sampling(8, None).hulls is None and sampling(8, None).mesh_max_points == 8
    assert sampling(None, 32).hulls == 32
    assert sampling(None, None).exact_ellipsoids and not sampling(None, None, 12).exact_ellipsoids
    assert sampling(None, None, 12).sphere_samples == 12
    with pytest.raises(SystemExit) as exit_:
        cli.main(["info", "humanoid", "--ellipsoid-points", "1"])
    assert exit_.value.code == 2 and "must be an integer >= 2" in capsys.readouterr().err


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    text = capsys.readouterr().out
    assert exit_.value.code == 0 and "``" not in text and ":func:" not in text
    assert "examples:\n  jaxsim-like info humanoid" in text and "exit status:" in text
    with pytest.raises(SystemExit):
        cli.main(["simulate", "--help"])
    text = capsys.readouterr().out
    for option in ("--fixed-base", "--x64", "--mesh-points", "--mesh-hulls", "--max-penetration", "--friction", "--quiet", "--every", "--fields", "--worlds"):
        assert option in text
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.strip() == f"jaxsim-like {js.__version__}"


def test_duration_is_checked_before_loading(monkeypatch, capsys):
    monkeypatch.setattr(cli, "_load", lambda args: pytest.fail("the model was loaded before the check"))
    for duration in ("inf", "1e9", "-1"):
        assert cli.main(["simulate", "pendulum", "--duration", duration]) == 2
        assert capsys.readouterr().err.startswith("jaxsim-like: error: --duration")


@pytest.fixture
def segments(monkeypatch, capsys):
    """simulate_batch counted: 20-step segments; ``calls`` holds the stdout printed before each call and
    ``err`` the stderr; ``interrupt_at``: the call that Ctrl-C interrupts (None: none)."""
    from jaxsim_like import batching, cli_simulate

    monkeypatch.setattr(cli_simulate, "SEGMENT_STEPS", 20)
    real = batching.simulate_batch
    state = {"calls": [], "err": "", "interrupt_at": None}

    def counted(*args, **kwargs):
        captured = capsys.readouterr()
        state["calls"].append(captured.out)
        state["err"] += captured.err
        if len(state["calls"]) == state["interrupt_at"]:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(batching, "simulate_batch", counted)
    return state


def test_simulate_prints_the_summary_first_and_estimates_long_runs(segments, monkeypatch, capsys):
    from jaxsim_like import cli_simulate

    monkeypatch.setattr(cli_simulate, "LONG_RUN_SECONDS", 0.0)  # every run is long
    assert cli.main(["simulate", "pendulum", "--duration", "0.06", "--dt", "0.001"]) == 0
    assert len(segments["calls"]) == 3 and "model        pendulum" in segments["calls"][0]
    captured = capsys.readouterr()
    assert "model        pendulum" not in captured.out and "finite       1 of 1 world(s)" in captured.out
    err = segments["err"] + captured.err
    assert re.search(r"^estimated    \d+ s for the remaining 20 steps \(Ctrl-C stops", err, re.M), err


def test_ctrl_c_stops_with_the_summary_so_far(segments, tmp_path, capsys):
    segments["interrupt_at"] = 3
    out = tmp_path / "run.npz"
    assert cli.main(["simulate", "pendulum", "--duration", "0.06", "--dt", "0.001", "--out", str(out)]) == 130
    captured = capsys.readouterr()
    assert "interrupted  after 40 of 60 steps (Ctrl-C): the lines above cover those steps; nothing saved" in captured.out
    assert "simulated    0.040 s x 1 world" in captured.out and "finite       1 of 1 world(s)" in captured.out
    assert "Traceback" not in captured.err and not out.exists()


def test_ctrl_c_while_compiling_is_one_line(segments, capsys):
    segments["interrupt_at"] = 1
    assert cli.main(["simulate", "pendulum", "--duration", "0.06", "--dt", "0.001"]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == "jaxsim-like: interrupted (Ctrl-C)"
