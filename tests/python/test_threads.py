"""Predictions from several threads at once (the GIL is released inside) give the serial answers."""
from concurrent.futures import ThreadPoolExecutor

import headroom

CASES = [
    ("codellama/CodeLlama-7b-hf", dict(gpu="H100", max_model_len=4096)),
    ("meta-llama/Llama-3.1-70B-Instruct", dict(gpu="H100")),
    ("meta-llama/Llama-3.1-70B-Instruct", dict(gpu="A100", gpus=4, tensor_parallel_size=4, kv_cache_dtype="fp8")),
    ("meta-llama/Llama-3.1-8B-Instruct", dict(gpu="L4", max_model_len=16384, enforce_eager=True)),
]


def _one(i):
    model, kwargs = CASES[i % len(CASES)]
    return i % len(CASES), headroom.check(model, **kwargs).to_dict()


def test_threads_give_the_serial_answers():
    serial = [headroom.check(model, **kwargs).to_dict() for model, kwargs in CASES]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(_one, range(64)))
    assert len(results) == 64
    for i, doc in results:
        assert doc == serial[i]


def test_threads_plan_and_diagnose():
    from conftest import LOGS
    log = str(LOGS / "v1_kv_insufficient.log")
    want_plan = headroom.plan("meta-llama/Llama-3.1-8B-Instruct", gpu="A100", context=8192).to_dict()
    want_diag = headroom.diagnose(log).to_dict()
    with ThreadPoolExecutor(max_workers=6) as pool:
        plans = [pool.submit(headroom.plan, "meta-llama/Llama-3.1-8B-Instruct", gpu="A100", context=8192) for _ in range(6)]
        diags = [pool.submit(headroom.diagnose, log) for _ in range(6)]
        assert all(f.result().to_dict() == want_plan for f in plans)
        assert all(f.result().to_dict() == want_diag for f in diags)
