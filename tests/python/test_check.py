"""headroom.check: typed results, vLLM's keyword names, and to_dict() equal to `check --format json`."""
import pytest

import headroom
from conftest import cli_json_many, same_as_cli

SMALL = "codellama/CodeLlama-7b-hf"
BIG = "meta-llama/Llama-3.1-70B-Instruct"


def test_check_returns_a_typed_prediction():
    r = headroom.check(SMALL, gpu="H100", vllm_version="0.19.0", max_model_len=4096)
    d = r.to_dict()
    assert r.starts is True and d["outcome"] == "ok"
    assert r.kv_cache_tokens == d["kv_cache_tokens"] and r.kv_cache_tokens > 4096
    assert r.memory.kv_cache_gib == d["memory"]["kv_cache_gib"] > 0
    assert r.memory.weights_gib == d["memory"]["weights_gib"] > 0
    assert r.max_model_len == 4096
    assert r.failure is None and r.changes == []
    assert r.settings["usage_context"] == "llm_class"
    # An H100 on v0.19 is inside the calibrated region: the range is the held-out 1.1 % either side.
    rng = r.kv_cache_range
    assert rng["calibrated"] and rng["reasons"] == []
    assert abs(rng["kv_tokens_low"] - r.kv_cache_tokens * 0.989) <= 1 and abs(rng["kv_tokens_high"] - r.kv_cache_tokens * 1.011) <= 1


def test_engine_args_reach_the_prediction():
    base = headroom.check(SMALL, gpu="H100", max_model_len=8192)
    fp8 = headroom.check(SMALL, gpu="H100", max_model_len=8192, kv_cache_dtype="fp8")
    tp2 = headroom.check(SMALL, gpu="H100", gpus=2, tensor_parallel_size=2, max_model_len=8192)
    assert fp8.settings["kv_cache_dtype"] == "fp8" and fp8.kv_cache_tokens > base.kv_cache_tokens
    assert tp2.settings["tensor_parallel_size"] == 2 and tp2.kv_cache_tokens > base.kv_cache_tokens
    eager = headroom.check(SMALL, gpu="H100", enforce_eager=True, gpu_memory_utilization=0.8, max_num_seqs=64)
    assert eager.settings["enforce_eager"] is True and eager.settings["max_num_seqs"] == 64
    assert eager.settings["gpu_memory_utilization"] == 0.8
    # --performance-mode throughput doubles the default batch limits (vLLM v0.17+, arg_utils.py):
    # LLM(...)'s on an H100 are 16384 batched tokens and 1024 sequences.
    fast = headroom.check(SMALL, gpu="H100", max_model_len=8192, performance_mode="throughput", vllm_version="0.20.0")
    assert fast.settings["performance_mode"] == "throughput"
    assert fast.settings["max_num_batched_tokens"] == 2 * 16384 and fast.settings["max_num_seqs"] == 2 * 1024


def test_a_vision_models_changes_are_engine_args_vllm_takes():
    # The encoder pass of Qwen2.5-VL's largest dummy image costs the KV cache on a 24 GB card (vllm
    # serve's 2048 batched tokens: one image per encoder batch): the changes include smaller images
    # and text-only mode, as the dicts vllm.LLM takes.
    args = dict(gpu="RTX 4090", max_model_len=90000, vllm_version="0.19.0", entrypoint="serve",
                limit_mm_per_prompt={"video": 0})
    r = headroom.check("Qwen/Qwen2.5-VL-7B-Instruct", **args)
    assert not r.starts
    by_key = {k: c for c in r.changes for k in c.engine_args}
    assert isinstance(by_key["mm_processor_kwargs"].engine_args["mm_processor_kwargs"]["max_pixels"], int)
    assert by_key["limit_mm_per_prompt"].engine_args["limit_mm_per_prompt"] == {"image": 0, "video": 0}
    for key in ("mm_processor_kwargs", "limit_mm_per_prompt"):
        again = headroom.check("Qwen/Qwen2.5-VL-7B-Instruct", **{**args, **by_key[key].engine_args})
        assert again.starts, key


def test_a_failure_carries_vllms_message_and_the_changes():
    r = headroom.check(BIG, gpu="H100")
    assert not r.starts
    assert r.failure.message == r.to_dict()["failure"]["message"] and r.failure.message
    assert r.failure.phase == r.to_dict()["failure"]["phase"]
    assert r.changes, "a 70B model on one H100 has changes that start it (more GPUs, fp8 weights)"
    for c in r.changes:
        assert c.engine_args and c.kv_cache_tokens > 0
        fixed = headroom.check(BIG, gpu="H100", gpus=c.gpus, **{k: v for k, v in c.engine_args.items() if v is not None})
        assert fixed.starts, c


def test_hf_overrides_lengthen_the_model_as_vllm_derives_it():
    # Qwen3's YaRN recipe: 32,768 native positions x 4 (vLLM's _get_and_verify_max_len for yarn);
    # without it vLLM refuses 131,072 against the config's 40,960.
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    r = headroom.check("Qwen/Qwen3-8B", gpu="H100", max_model_len=131072, vllm_version="0.19.0",
                       hf_overrides={"rope_scaling": yarn})
    assert r.starts and r.max_model_len == 131072
    plain = headroom.check("Qwen/Qwen3-8B", gpu="H100", max_model_len=131072, vllm_version="0.19.0")
    assert not plain.starts


def test_known_but_unmodelled_engine_args_are_accepted():
    r = headroom.check(SMALL, gpu="H100", seed=1, trust_remote_code=True, limit_mm_per_prompt={"image": 2},
                       enable_lora=True, max_loras=2)
    assert r.starts
    assert any("LoRA" in w for w in r.warnings), r.warnings


def test_unknown_keyword_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="max_model_length"):
        headroom.check(SMALL, gpu="H100", max_model_length=4096)


def test_serve_entrypoint_and_env():
    r = headroom.check(SMALL, gpu="H100", entrypoint="serve", env={"VLLM_ATTENTION_BACKEND": "FLASHINFER"})
    assert r.settings["usage_context"] == "api_server"
    with pytest.raises(headroom.InvalidArgument) as e:
        headroom.check(SMALL, gpu="H100", entrypoint="docker")
    assert e.value.where == "entrypoint"


def _catalogue():
    return headroom.models()


def test_to_dict_equals_the_cli_over_the_catalogue():
    ids = _catalogue()
    assert len(ids) > 20
    cli = cli_json_many([("check", m, "--gpu", "H100", "--vllm-version", "0.19.0", "--entrypoint", "llm") for m in ids])
    mismatches = [m for m, want in zip(ids, cli)
                  if not same_as_cli(lambda: headroom.check(m, gpu="H100", vllm_version="0.19.0"), want)]
    assert not mismatches
    assert sum(isinstance(w, dict) for w in cli) > len(ids) * 0.9


@pytest.mark.parametrize("kwargs,flags", [
    (dict(tensor_parallel_size=2, max_model_len=8192), ["-tp", "2", "--max-model-len", "8192"]),
    (dict(kv_cache_dtype="fp8", gpu_memory_utilization=0.85), ["--kv-cache-dtype", "fp8", "--gpu-memory-utilization", "0.85"]),
    (dict(enforce_eager=True, max_num_seqs=32, max_model_len="auto"), ["--enforce-eager", "--max-num-seqs", "32", "--max-model-len", "auto"]),
    (dict(max_num_batched_tokens=4096, enable_prefix_caching=False), ["--max-num-batched-tokens", "4096", "--no-enable-prefix-caching"]),
    (dict(performance_mode="throughput", max_model_len=8192), ["--performance-mode", "throughput", "--max-model-len", "8192"]),
])
def test_to_dict_equals_the_cli_with_engine_args(kwargs, flags):
    ids = _catalogue()[::7]
    cli = cli_json_many([("check", m, "--gpu", "A100", "--gpus", "2", *flags) for m in ids])
    for model, want in zip(ids, cli):
        assert same_as_cli(lambda: headroom.check(model, gpu="A100", gpus=2, entrypoint="serve", **kwargs), want), model


def _installed_packages(monkeypatch, packages):
    """Makes headroom see ``packages`` ({name: version}) as this environment's installed ones."""
    def version(name):
        if name in packages:
            return packages[name]
        raise headroom._metadata.PackageNotFoundError(name)
    monkeypatch.delenv("HEADROOM_PYTHON_SITE", raising=False)
    monkeypatch.setattr(headroom._metadata, "version", version)


def test_the_installed_vllm_is_modelled_without_a_version(monkeypatch):
    # A 152k vocabulary: the sampler's path sets the activation peak at 256 sequences.
    QWEN = "Qwen/Qwen2.5-7B-Instruct"
    _installed_packages(monkeypatch, {"vllm": "0.10.1.1"})
    pip = headroom.check(QWEN, gpu="A100-80GB", max_model_len=4096, entrypoint="serve")
    assert pip.vllm_version == "0.10.1.1"
    # No FlashInfer beside v0.10: the sort path, which the range no longer leaves open.
    reasons = " ".join((pip.kv_cache_range or {}).get("reasons", []))
    assert "FlashInfer's top-k/top-p kernels only when FlashInfer is installed" not in reasons
    _installed_packages(monkeypatch, {"vllm": "0.10.1.1", "flashinfer-python": "0.2.8"})
    docker = headroom.check(QWEN, gpu="A100-80GB", max_model_len=4096, entrypoint="serve")
    assert docker.kv_cache_tokens > pip.kv_cache_tokens
    # A version given wins; so does a VLLM_USE_FLASHINFER_SAMPLER given.
    assert headroom.check(QWEN, gpu="A100-80GB", max_model_len=4096, entrypoint="serve", vllm_version="0.19.0").vllm_version == "0.19.0"
    stated = headroom.check(QWEN, gpu="A100-80GB", max_model_len=4096, entrypoint="serve", env={"VLLM_USE_FLASHINFER_SAMPLER": "0"})
    assert stated.kv_cache_tokens == pip.kv_cache_tokens
    assert headroom.plan(QWEN, gpu="A100-80GB", context=4096).to_dict()["vllm_version"] == "0.10.1.1"
    # A release candidate of v0.11.0 is v0.11.0's: FlashInfer's presence still decides its sampler.
    _installed_packages(monkeypatch, {"vllm": "0.11.0rc1"})
    rc = headroom.check(QWEN, gpu="A100-80GB", max_model_len=4096, entrypoint="serve")
    assert rc.vllm_version == "0.11.0" and rc.kv_cache_range is not None  # the A100 keeps a range
    reasons = " ".join(rc.kv_cache_range.get("reasons", []))
    assert "FlashInfer" not in reasons or "settles it" not in reasons
