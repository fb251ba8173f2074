"""Errors: headroom.Error subclasses with the CLI's message and where; bad input raises, never crashes."""
import math
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

import headroom
from conftest import cli_error

SMALL = "codellama/CodeLlama-7b-hf"


def test_unknown_model_has_the_clis_message():
    with pytest.raises(headroom.UnknownModel) as e:
        headroom.check("no-such-org/no-such-model-xyz", gpu="H100")
    assert str(e.value) == cli_error("check", "no-such-org/no-such-model-xyz", "--gpu", "H100")
    assert isinstance(e.value, headroom.Error) and isinstance(e.value, LookupError)


def test_unknown_gpu_has_the_clis_message():
    with pytest.raises(headroom.UnknownGpu) as e:
        headroom.check(SMALL, gpu="H999")
    assert e.value.message in cli_error("check", SMALL, "--gpu", "H999")


def test_invalid_engine_arg_names_the_keyword():
    with pytest.raises(headroom.InvalidArgument) as e:
        headroom.check(SMALL, gpu="H100", gpu_memory_utilization=1.5)
    assert e.value.where == "gpu_memory_utilization"
    assert e.value.message in cli_error("check", SMALL, "--gpu", "H100", "--gpu-memory-utilization", "1.5")
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("kwargs,where", [
    (dict(max_model_len=0), "max_model_len"),
    (dict(max_num_seqs=-4), "max_num_seqs"),
    (dict(tensor_parallel_size=-2), "tensor_parallel_size"),
    (dict(gpu_memory_utilization=math.nan), "gpu_memory_utilization"),
    (dict(gpu_memory_utilization=math.inf), "gpu_memory_utilization"),
    (dict(max_model_len="abc"), "max_model_len"),
    (dict(tensor_parallel_size=[1, 2]), "tensor_parallel_size"),
    (dict(kv_cache_dtype="fp3"), "kv_cache_dtype"),
    (dict(dtype=object()), "dtype"),
    (dict(limit_mm_per_prompt={"image": math.nan}), "limit_mm_per_prompt"),
    (dict(max_model_len=2**70), "max_model_len"),
])
def test_bad_engine_args_raise(kwargs, where):
    with pytest.raises(headroom.InvalidArgument) as e:
        headroom.check(SMALL, gpu="H100", **kwargs)
    assert e.value.where == where, e.value


@pytest.mark.parametrize("kwargs,where", [
    (dict(gpus=-1), "gpus"),
    (dict(gpus=0), "gpus"),
    (dict(gpus="2"), "gpus"),
    (dict(gpus=True), "gpus"),
    (dict(gpu=5), "gpu"),
    (dict(gpu_memory_gib=-3.0), "gpu_memory_gib"),
    (dict(gpu_memory_gib=math.nan), "gpu_memory_gib"),
    (dict(used_gib=500.0), "used_gib"),
    (dict(free_gib=-1), "free_gib"),
    (dict(nodes=0), "nodes"),
    (dict(vllm_version="zero"), "vllm_version"),
    (dict(hub_timeout=-1.0), "hub_timeout"),
    (dict(hub_timeout=math.nan), "hub_timeout"),
])
def test_bad_target_values_raise(kwargs, where):
    gpu = kwargs.pop("gpu", "H100") if "gpu_memory_gib" not in kwargs else None
    with pytest.raises(headroom.Error) as e:
        headroom.check(SMALL, gpu=gpu, **kwargs)
    assert isinstance(e.value, headroom.InvalidArgument), e.value
    assert e.value.where == where, e.value


@pytest.mark.parametrize("model", [123, None, b"\xff\xfe", "", ["a"]])
def test_bad_model_values_raise(model):
    with pytest.raises(headroom.Error):
        headroom.check(model, gpu="H100")


def test_no_gpu_on_this_host_is_an_error():
    with pytest.raises(headroom.InvalidArgument) as e:
        headroom.check(SMALL)
    assert "--gpu" in e.value.message or "gpu" in e.value.message


def test_plan_bad_values_raise():
    with pytest.raises(headroom.InvalidArgument):
        headroom.plan(SMALL, gpu="H100", goal="fastest")
    with pytest.raises(headroom.InvalidArgument):
        headroom.plan(SMALL, gpu="H100", context=-5)
    with pytest.raises(headroom.InvalidArgument):
        headroom.plan(SMALL, gpu="H100", margin_gib=math.nan)
    with pytest.raises(headroom.InvalidArgument):
        headroom.plan(SMALL, gpu="H100", concurrency="many")


class _GatedHub(BaseHTTPRequestHandler):
    def _answer(self):
        self.send_response(403)
        self.send_header("X-Error-Code", "GatedRepo")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = _answer
    do_HEAD = _answer

    def log_message(self, *args):
        pass


def test_hub_refusal_is_a_hub_error(monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), _GatedHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
        with pytest.raises(headroom.HubError) as e:
            headroom.check("some-org/gated-model", gpu="H100")
        assert "gated" in e.value.message
        assert isinstance(e.value, OSError)
    finally:
        server.shutdown()
