"""plan, diagnose, gpus, models, record and history: each equal to the CLI's --format json."""
import json
import os
import shutil

import pytest

import headroom
from conftest import LOGS, cli_error, cli_json, run_cli


def test_plan_equals_the_cli():
    p = headroom.plan("meta-llama/Llama-3.1-8B-Instruct", gpu="A100", context=8192, vllm_version="0.19.0")
    cli = cli_json("plan", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "A100", "--context", "8192",
                   "--vllm-version", "0.19.0")
    assert p.to_dict() == cli
    assert p.recommended is not None and p.recommended.prediction.starts
    assert p.recommended.prediction.max_model_len >= 8192
    assert p.explanation == cli["explanation"]


def test_plan_with_options_equals_the_cli():
    p = headroom.plan("meta-llama/Llama-3.1-70B-Instruct", gpu="H100", gpus=4, context=32768, concurrency=8,
                      goal="latency", allow_fp8_kv=True)
    cli = cli_json("plan", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100", "--gpus", "4", "--context", "32768",
                   "--concurrency", "8", "--goal", "latency", "--allow-fp8-kv")
    assert p.to_dict() == cli


def test_plan_keeps_the_engine_args_it_does_not_choose():
    # A text-only Qwen2.5-VL: every configuration keeps the limits, as `plan -- vllm serve MODEL
    # --limit-mm-per-prompt ...` does; the plan's own choices stay errors to pass.
    args = dict(gpu="RTX 4090", context=32768, vllm_version="0.19.0")
    p = headroom.plan("Qwen/Qwen2.5-VL-7B-Instruct", **args, limit_mm_per_prompt={"image": 0, "video": 0})
    rc, out, err = run_cli("plan", "--gpu", "RTX 4090", "--context", "32768", "--vllm-version", "0.19.0", "--format", "json",
                           "--", "vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct", "--limit-mm-per-prompt",
                           '{"image": 0, "video": 0}')
    assert rc == 0, err
    cli = json.loads(out)
    assert p.to_dict() == cli
    assert "limit_mm_per_prompt={\"image\": 0, \"video\": 0}" in p.recommended.renderings["python"]
    full = headroom.plan("Qwen/Qwen2.5-VL-7B-Instruct", **args)
    assert p.recommended.prediction.to_dict()["memory"]["weights_gib"] < full.recommended.prediction.to_dict()["memory"]["weights_gib"]
    with pytest.raises(TypeError, match="max_num_seqs"):
        headroom.plan("Qwen/Qwen2.5-VL-7B-Instruct", **args, max_num_seqs=8)


def test_plan_keeps_an_online_quantization():
    # vllm.LLM(..., quantization="fp8"): the plan sizes fp8 weights, as `plan -q fp8` does.
    args = dict(gpu="L4", context=8192, vllm_version="0.19.0")
    p = headroom.plan("meta-llama/Llama-3.1-8B-Instruct", **args, quantization="fp8")
    assert p.to_dict() == cli_json("plan", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "L4", "--context", "8192",
                                   "--vllm-version", "0.19.0", "--quantization", "fp8")
    assert 'quantization="fp8"' in p.recommended.renderings["python"]
    plain = headroom.plan("meta-llama/Llama-3.1-8B-Instruct", **args)
    assert p.recommended.prediction.to_dict()["memory"]["weights_gib"] < plain.recommended.prediction.to_dict()["memory"]["weights_gib"]


def test_plan_where_nothing_fits():
    p = headroom.plan("meta-llama/Llama-3.1-70B-Instruct", gpu="T4", gpus=1)
    assert p.to_dict() == cli_json("plan", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "T4", "--gpus", "1")
    assert p.recommended is None and p.no_fit["reason"]


def _a_failure_log():
    return LOGS / "v1_kv_insufficient.log"


def test_diagnose_a_path_equals_the_cli():
    d = headroom.diagnose(str(_a_failure_log()))
    assert d.to_dict() == cli_json("diagnose", str(_a_failure_log()))
    assert d.failure_found and d.error_class == d.to_dict()["primary"]["class"]
    assert d.fixes


def test_diagnose_wrapper_alone_is_a_failure_with_no_class():
    d = headroom.diagnose("RuntimeError: Engine core initialization failed. See root cause above.\n")
    assert d.failure_found and d.error_class is None
    assert d.primary["record"] == "engine_failure_unexplained"
    assert repr(d) == "<headroom.Diagnosis failure with no class>"


def test_diagnose_text_and_pathlike():
    text = _a_failure_log().read_text()
    by_text = headroom.diagnose(text)
    by_path = headroom.diagnose(_a_failure_log())
    assert by_text.error_class == by_path.error_class
    assert by_text.primary["message"] == by_path.primary["message"]
    assert headroom.diagnose(text.encode()).error_class == by_path.error_class


def test_diagnose_a_non_utf8_path(tmp_path):
    name = os.fsencode(str(tmp_path)) + b"/log-\xff\xfe.log"
    shutil.copyfile(_a_failure_log(), name)
    d = headroom.diagnose(name)
    assert d.error_class == headroom.diagnose(_a_failure_log()).error_class
    assert headroom.diagnose(os.fsdecode(name)).error_class == d.error_class


def test_diagnose_bad_input():
    with pytest.raises(headroom.InvalidArgument):
        headroom.diagnose("/no/such/log.txt")
    with pytest.raises(headroom.InvalidArgument):
        headroom.diagnose(42)
    with pytest.raises(headroom.InvalidArgument):
        headroom.diagnose("x\n", gpus=-1)
    with pytest.raises(headroom.Error, match="binary data"):
        headroom.diagnose(b"\x00\x01\x02\x03\xfa not a log\x00\n")
    # A UTF-16 log (byte-order mark FF FE, as PowerShell's > writes it) is decoded, not refused.
    utf16 = "INFO vLLM API server version 0.19.0\n".encode("utf-16")
    assert not headroom.diagnose(utf16).failure_found
    assert not headroom.diagnose("INFO nothing failed here\n").failure_found


def test_gpus_catalogue_equals_the_cli():
    g = headroom.gpus(catalog=True)
    assert g.to_dict() == cli_json("gpus", "--catalog")
    assert any(row["key"].startswith("h100") for row in g)


def test_gpus_without_a_gpu_raises():
    with pytest.raises(headroom.Error):
        headroom.gpus()


def test_models_filters_the_catalogue():
    every = headroom.models()
    llama = headroom.models("LLAMA")
    assert llama and set(llama) < set(every)
    assert all("llama" in m.lower() for m in llama)
    assert headroom.models("no-such-model-name") == []
    with pytest.raises(headroom.InvalidArgument):
        headroom.models(5)



def test_record_and_history_equal_the_cli(tmp_db):
    log = next(p for p in sorted(LOGS.glob("*.log")) if "ok" in p.name)
    first = headroom.record(str(log), db=tmp_db)
    assert first.records[0]["inserted"] is True and first.records[0]["log"] == str(log)
    again = headroom.record(log, db=tmp_db)
    assert again.records[0]["inserted"] is False and again.records[0]["id"] == first.records[0]["id"]
    h = headroom.history(tmp_db)
    assert len(h) == 1
    assert h.to_dict() == cli_json("history", "list", "--db", str(tmp_db))
    assert len(headroom.history(tmp_db, model="no-such-model")) == 0


def test_history_of_a_missing_database_is_empty(tmp_path):
    h = headroom.history(tmp_path / "none.db")
    assert len(h) == 0 and not (tmp_path / "none.db").exists()


def test_record_of_a_bad_log_stores_nothing(tmp_db):
    with pytest.raises(headroom.Error) as e:
        headroom.record(["/no/such/vllm.log"], db=tmp_db)
    assert e.value.message in cli_error("record", "/no/such/vllm.log", "--db", str(tmp_db))
    assert len(headroom.history(tmp_db)) == 0
    with pytest.raises(headroom.InvalidArgument):
        headroom.record([3], db=tmp_db)
    with pytest.raises(headroom.InvalidArgument):
        headroom.record(str(_a_failure_log()), outcome="maybe", db=tmp_db)


def test_plan_keeps_the_compilation_config():
    # Four capture sizes instead of vLLM's default list: every configuration captures those graphs.
    cc = {"cudagraph_capture_sizes": [1, 2, 4, 8]}
    p = headroom.plan("Qwen/Qwen3-8B", gpu="L4", context=8192, vllm_version="0.21.0", compilation_config=cc)
    assert p.to_dict() == cli_json("plan", "Qwen/Qwen3-8B", "--gpu", "L4", "--context", "8192", "--vllm-version", "0.21.0",
                                   "--compilation-config", json.dumps(cc))
    assert "compilation_config=" in p.recommended.renderings["python"]
    plain = headroom.plan("Qwen/Qwen3-8B", gpu="L4", context=8192, vllm_version="0.21.0")
    graphs = lambda plan: plan.recommended.prediction.to_dict()["memory"]["cuda_graph_gib"]
    assert graphs(p) < graphs(plain)
