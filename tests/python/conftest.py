"""Test set-up for the Python package: the CLI to compare with, and an environment that never
reaches the real Hub, the developer's caches and history, or this host's GPUs (as ctest sets it)."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("HEADROOM_BINARY_DIR") or ROOT / "build")
CLI = Path(os.environ.get("HEADROOM_BIN") or BUILD / "headroom")
LOGS = ROOT / "tests" / "data" / "logs"

_home = tempfile.mkdtemp(prefix="headroom-pytest-")
os.environ.update({
    "HF_HUB_OFFLINE": "1",
    "XDG_CACHE_HOME": os.path.join(_home, "cache"),
    "HF_HUB_CACHE": os.path.join(_home, "hf"),
    "HF_HOME": os.path.join(_home, "hf-home"),
    "HEADROOM_DB": os.path.join(_home, "no-history.db"),
    "HEADROOM_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
    "HEADROOM_NVIDIA_SMI": "/nonexistent/nvidia-smi",
    "NO_COLOR": "1",
})
# Tests name the versions they model: neither the CLI nor the package looks for an installed vLLM.
os.environ["HEADROOM_PYTHON_SITE"] = ""
os.environ.pop("HF_TOKEN", None)
os.environ.pop("HF_ENDPOINT", None)


def run_cli(*args, check_rc=None):
    """Runs the CLI; returns (exit code, stdout, stderr)."""
    p = subprocess.run([str(CLI), *args], capture_output=True, text=True, env=os.environ.copy())
    if check_rc is not None:
        assert p.returncode in check_rc, p.stderr
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    rc, out, err = run_cli(*args, "--format", "json")
    assert rc in (0, 3), err
    return json.loads(out)


def cli_error(*args):
    """The message of the CLI's `headroom: error: ...` line."""
    rc, _, err = run_cli(*args)
    assert rc in (1, 2), err
    lines = [l for l in err.splitlines() if l.startswith("headroom: error: ")]
    assert lines, err
    return lines[-1][len("headroom: error: "):]


def _json_or_error(argv):
    rc, out, err = run_cli(*argv, "--format", "json")
    if rc in (0, 3):
        return json.loads(out)
    lines = [l for l in err.splitlines() if l.startswith("headroom: error: ")]
    return ("error", lines[-1][len("headroom: error: "):] if lines else err)


def cli_json_many(argvs, workers=4):
    """For each command line, the CLI's JSON document, or ("error", message) when it failed; a few
    processes at a time."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_json_or_error, argvs))


def same_as_cli(call, want):
    """Whether a headroom call gives the CLI's answer: the same document, or an error with its message."""
    import headroom
    try:
        got = call().to_dict()
    except headroom.Error as e:
        return isinstance(want, tuple) and want[1] == str(e)
    return got == want


@pytest.fixture
def tmp_db(tmp_path):
    return tmp_path / "history.db"
