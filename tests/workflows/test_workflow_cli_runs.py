"""Command-line runs: the persistent compilation cache across processes, a run that goes
non-finite, and ``--out`` streamed in segments with decimation and field and world selection."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import jaxsim_like as js
from jaxsim_like import cli, cli_simulate
from jaxsim_like.batching import simulate_batch
from jaxsim_like.recording import Recording

ROOT = Path(__file__).resolve().parents[2]


def _cli(cache: Path) -> str:
    environment = {**os.environ, "JAXSIM_LIKE_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "jaxsim_like", "simulate", "pendulum", "--duration", "0.01", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_second_run_reads_every_executable_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    first = re.search(r"(\d+) executable\(s\) compiled, (\d+) read from the cache", _cli(cache))
    assert int(first[1]) > 0 and int(first[2]) == 0
    files = sorted(p.name for p in cache.rglob("*") if p.is_file())
    assert len(files) >= int(first[1])
    second = re.search(r"(\d+) executable\(s\) compiled, (\d+) read from the cache", _cli(cache))
    assert int(second[1]) == 0 and int(second[2]) == int(first[1])
    assert sorted(p.name for p in cache.rglob("*") if p.is_file()) == files


def test_a_run_that_goes_non_finite_exits_with_status_1(capsys):
    # The explicit step at 20 ms: the quadruped's stiff contacts blow up on touchdown.
    argv = ["simulate", "quadruped", "--integrator", "semi_implicit_euler", "--dt", "0.02", "--duration", "1", "--height", "0.05", "--batch", "2"]
    assert cli.main(argv) == 1
    captured = capsys.readouterr()
    line = captured.err.strip().splitlines()[-1]
    match = re.fullmatch(r"jaxsim-like: error: (\d) of 2 world\(s\) went non-finite, the first at step (\d+) \(t = \S+ s\) in world (\d)", line)
    assert match, captured.err
    assert re.search(rf"^finite       {2 - int(match[1])} of 2 world\(s\)", captured.out, re.M)


def test_out_streams_decimated_fields_of_chosen_worlds(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli_simulate, "SEGMENT_STEPS", 20)  # three segments, three chunks written
    out = tmp_path / "run.npz"
    argv = ["simulate", "pendulum", "--duration", "0.06", "--dt", "0.001", "--batch", "3", "--out", str(out),
            "--every", "4", "--fields", "joint_positions,contact_forces", "--worlds", "0,2"]
    assert cli.main(argv) == 0
    assert "(2 world(s), 15 samples of joint_positions,contact_forces, every 4 step(s))" in capsys.readouterr().out
    recording = Recording.load(out)
    model = js.load_model(js.models.path("pendulum"))
    assert recording.joint_positions.shape == (2, 15, 1) and recording.contact_forces.shape == (2, 15, len(model.point_link), 3)
    assert recording.base_position is None and recording.joint_torques is None
    np.testing.assert_allclose(recording.time, 0.004 * np.arange(1, 16))
    assert recording.metadata["every"] == 4 and recording.metadata["worlds"] == [0, 2]
    # The same worlds run whole, every step kept: the file holds steps 3, 7, ... of worlds 0 and 2.
    args = argparse.Namespace(seed=0, batch=3, height=0.5)
    states = cli_simulate._initial_states(model, args)
    params = js.SimulationParams.build(model, dt=0.001)
    _, (trajectory, _) = simulate_batch(model, states, np.zeros((60, model.dofs)), params=params, trajectory=True)
    expected = np.asarray(trajectory.joint_positions)[[0, 2], 3::4]
    np.testing.assert_allclose(recording.joint_positions, expected, rtol=1e-12, atol=1e-12)
    assert not list(tmp_path.glob(".recording-*"))  # the temporary folder is gone
