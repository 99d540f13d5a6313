"""The XLA settings applied on import (jaxsim_like._xla), checked in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jaxsim_like._xla import CPU_FLAGS

PROBE = (
    "import json, os, jaxsim_like\n"
    "from jax._src import xla_bridge\n"
    "print(json.dumps({'flags': os.environ.get('XLA_FLAGS', ''), 'async': xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value}))\n"
)


def probe(**environment: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("XLA_FLAGS", "JAXSIM_LIKE_KEEP_XLA_FLAGS")}
    env.update(environment)
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_appends_the_flags_and_makes_dispatch_synchronous():
    settings = probe()
    for name, value in CPU_FLAGS.items():
        assert f"{name}={value}" in settings["flags"].split()
    assert settings["async"] is False


def test_flags_the_user_set_are_kept():
    settings = probe(XLA_FLAGS="--xla_cpu_use_fusion_emitters=true")
    assert "--xla_cpu_use_fusion_emitters=true" in settings["flags"].split()
    assert "--xla_cpu_use_fusion_emitters=false" not in settings["flags"]


def test_opting_out_leaves_everything_as_it_was():
    settings = probe(JAXSIM_LIKE_KEEP_XLA_FLAGS="1")
    assert settings == {"flags": "", "async": True}
