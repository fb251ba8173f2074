"""Speed of headroom's Python package: a sweep of checks in one process against the CLI, which
starts one process per check.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_sweep.py [--checks 10000] [--threads 1,2]
        [--cli build/headroom] [--cli-runs 100]

The sweep walks the catalogue on an H100 with several max_model_len values (offline, no history,
vLLM 0.19.0), so most checks start and some fail (those also search the changes that start them).
Reports checks per second for the sweep (one thread, and several threads: the GIL is released
during a prediction) and for the same checks through the CLI, one process each.
"""
import argparse
import itertools
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HEADROOM_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
os.environ.setdefault("HEADROOM_NVIDIA_SMI", "/nonexistent/nvidia-smi")

import headroom  # noqa: E402


def cases(n):
    models = headroom.models()
    lengths = [2048, 8192, 32768, None]
    grid = list(itertools.product(models, lengths))
    return [grid[i % len(grid)] for i in range(n)]


def one(case):
    """1 when vLLM is predicted to start, 0 when not, -1 for an error (a catalogue entry without
    architecture facts, a length over the model's limit)."""
    model, length = case
    try:
        return int(headroom.check(model, gpu="H100", vllm_version="0.19.0", max_model_len=length, use_history=False).starts)
    except headroom.Error:
        return -1


def sweep(work, threads):
    start = time.perf_counter()
    if threads == 1:
        results = [one(c) for c in work]
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            results = list(pool.map(one, work, chunksize=64))
    return time.perf_counter() - start, results.count(1), results.count(-1)


def cli_rate(cli, work):
    start = time.perf_counter()
    for model, length in work:
        args = [cli, "check", model, "--gpu", "H100", "--vllm-version", "0.19.0", "--no-history", "--format", "json",
                "--entrypoint", "llm"]
        if length:
            args += ["--max-model-len", str(length)]
        subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return len(work) / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checks", type=int, default=10000)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--cli", default=str(ROOT / "build" / "headroom"))
    ap.add_argument("--cli-runs", type=int, default=100)
    a = ap.parse_args()
    work = cases(a.checks)
    print(f"headroom {headroom.__version__}, {len(headroom.models())} catalogue models, {a.checks} checks, "
          f"{os.cpu_count()} CPUs")
    for threads in [int(t) for t in a.threads.split(",")]:
        seconds, started, errors = sweep(work, threads)
        print(f"python, {threads} thread(s): {a.checks / seconds:,.0f} checks/s ({seconds:.1f} s; {started} start, "
              f"{errors} errors)")
    if a.cli_runs > 0 and os.access(a.cli, os.X_OK):
        rate = cli_rate(a.cli, work[: a.cli_runs])
        print(f"cli, one process per check: {rate:,.1f} checks/s ({a.cli_runs} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
