"""headroom.preflight: raises WillNotStart with vLLM's message and the changes; warns on a tight fit."""
import warnings

import pytest

import headroom

BIG = "meta-llama/Llama-3.1-70B-Instruct"
SMALL = "codellama/CodeLlama-7b-hf"


def test_preflight_raises_will_not_start_with_the_message_and_changes():
    llm_kwargs = dict(model=BIG, max_model_len=32768)
    with pytest.raises(headroom.WillNotStart) as e:
        headroom.preflight(gpu="H100", **llm_kwargs)
    expected = headroom.check(BIG, gpu="H100", max_model_len=32768)
    assert e.value.message == expected.failure.message
    assert e.value.phase == expected.failure.phase
    assert [c.engine_args for c in e.value.changes] == [c.engine_args for c in expected.changes]
    assert e.value.changes and expected.failure.message in str(e.value)
    assert e.value.prediction.to_dict() == expected.to_dict()


def test_preflight_returns_the_prediction_when_it_starts():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = headroom.preflight(model=SMALL, gpu="H100", max_model_len=4096, gpu_memory_utilization=0.9)
    assert p.starts and p.settings["usage_context"] == "llm_class"
    assert p.to_dict() == headroom.check(SMALL, gpu="H100", max_model_len=4096, gpu_memory_utilization=0.9).to_dict()


def test_preflight_warns_when_the_fit_is_tight():
    longest = headroom.check(SMALL, gpu="L4", max_model_len=4096).largest_fitting_max_model_len
    tight = headroom.check(SMALL, gpu="L4", max_model_len=longest)
    assert tight.starts and tight.max_concurrency < 1.25
    with pytest.warns(headroom.TightFit, match="little room"):
        headroom.preflight(SMALL, gpu="L4", max_model_len=longest)


def test_preflight_takes_vllms_keywords_only():
    with pytest.raises(TypeError, match="max_len"):
        headroom.preflight(model=SMALL, gpu="H100", max_len=4096)
    with pytest.raises(TypeError):
        headroom.preflight(gpu="H100", max_model_len=4096)
