"""headroom: vLLM's startup memory, predicted before vLLM starts.

    import headroom
    r = headroom.check("meta-llama/Llama-3.1-8B-Instruct", gpu="H100", max_model_len=32768)
    r.starts, r.kv_cache_tokens, r.memory.kv_cache_gib

    headroom.preflight(**llm_kwargs)   # raises headroom.WillNotStart with vLLM's message and the changes
    llm = vllm.LLM(**llm_kwargs)

The predictions come from headroom's C++ library (the one the ``headroom`` CLI runs), with the GIL
released; results convert to the same dicts as the CLI's ``--format json``. The Hub settings are the
CLI's: HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE=1 (or ``offline=True``), the Hugging Face cache, and
headroom's Hub cache under $XDG_CACHE_HOME/headroom/hub. See docs/python.md.
"""
from __future__ import annotations

import importlib.metadata as _metadata
import json
import math
import os
import re
import shlex
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _headroom
from ._engine_args import KNOWN as _KNOWN_ENGINE_ARGS
from ._errors import (Error, HubError, InvalidArgument, TightFit, UnknownGpu, UnknownModel, WillNotStart,
                      from_library as _from_library)
from ._results import Change, Diagnosis, Failure, Gpus, Memory, Plan, PlannedConfig, Prediction, Records

__all__ = [
    "check", "plan", "preflight", "diagnose", "gpus", "models", "record", "history",
    "Prediction", "Plan", "PlannedConfig", "Memory", "Failure", "Change", "Diagnosis", "Gpus", "Records",
    "Error", "InvalidArgument", "UnknownModel", "UnknownGpu", "HubError", "WillNotStart", "TightFit",
]
__version__: str = _headroom.version

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# A whole log is read into memory when it is given as text; files are streamed by the library.
_MAX_LOG_TEXT_BYTES = 1 << 30


def _call(fn, *args):  # type: ignore[no-untyped-def]
    """Runs a _headroom function; its LibraryError becomes the headroom.Error subclass."""
    try:
        return fn(*args)
    except _headroom.LibraryError as e:
        raise _from_library(e) from None


def _json_value(name: str, value: Any) -> Any:
    """One engine argument as the JSON value the library's flag parser takes."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgument(f"expected a finite number, got {value!r}", name, "invalid_argument")
        return value
    if isinstance(value, (dict, list, tuple)):
        try:  # vLLM takes JSON for mappings and lists on its command line (limit_mm_per_prompt, ...)
            return json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidArgument(f"expected JSON-serialisable values: {e}", name, "invalid_argument") from None
    text = str(value)
    if type(value).__name__ == "dtype" and text.startswith("torch."):  # torch.bfloat16 -> "bfloat16"
        return text[len("torch."):]
    raise InvalidArgument(f"expected a string, number, boolean, dict or list, got {type(value).__name__}", name,
                          "invalid_argument")


def _engine_flags(engine_args: Mapping[str, Any], function: str) -> Dict[str, Any]:
    flags: Dict[str, Any] = {}
    for name, value in engine_args.items():
        if name not in _KNOWN_ENGINE_ARGS:
            raise TypeError(f"{function}() got an unexpected keyword argument '{name}' "
                            "(not an argument of vllm.LLM / EngineArgs)")
        if value is None:  # vLLM's default
            continue
        flags[name] = _json_value(name, value)
    return flags


_PLAN_KEPT_ARGS = ("quantization", "dtype", "hf_overrides", "compilation_config", "performance_mode", "limit_mm_per_prompt", "mm_processor_kwargs", "mm_encoder_tp_mode",
                   "language_model_only", "skip_mm_profiling")


def _kept_command(model: str, engine_args: Mapping[str, Any]) -> str:
    """``vllm serve MODEL --flag value ...`` of the engine arguments a plan keeps, quoted for the
    command parser (JSON for dicts, a bare switch for True)."""
    words = ["vllm", "serve", model]
    for name, value in _engine_flags(engine_args, "plan").items():
        if name not in _PLAN_KEPT_ARGS:
            raise TypeError(f"plan() got an unexpected keyword argument '{name}' (the plan chooses it, or it is not one "
                            f"plan keeps: {', '.join(_PLAN_KEPT_ARGS)})")
        flag = "--" + name.replace("_", "-")
        if value is True:
            words.append(flag)
        elif value is not False:
            words += [flag, json.dumps(value) if isinstance(value, (dict, list)) else str(value)]
    return " ".join(shlex.quote(w) for w in words)


def _model_ref(model: Any) -> str:
    if isinstance(model, bytes):
        model = os.fsdecode(model)
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
        if isinstance(model, bytes):
            model = os.fsdecode(model)
    if not isinstance(model, str):
        raise InvalidArgument(f"expected a model id or path (str), got {type(model).__name__}", "model", "invalid_argument")
    if not model:
        raise InvalidArgument("expected a model id or path, got ''", "model", "invalid_argument")
    return model


def _target(gpu: Optional[str], gpus: Optional[int], nodes: Optional[int], gpu_memory_gib: Optional[float],
            used_gib: Optional[float], free_gib: Optional[float], vllm_version: Optional[str]) -> Dict[str, Any]:
    """The GPU and version keywords as the request keys check and plan share."""
    target: Dict[str, Any] = {}
    for key, value, kind in (("gpu", gpu, str), ("gpus", gpus, int), ("nodes", nodes, int),
                             ("gpu_memory_gib", gpu_memory_gib, float), ("used_gib", used_gib, float),
                             ("free_gib", free_gib, float), ("vllm_version", vllm_version, str)):
        if value is None:
            continue
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is str and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise InvalidArgument(f"expected {kind.__name__}, got {type(value).__name__}", key, "invalid_argument")
        if kind is float and not math.isfinite(value):
            raise InvalidArgument(f"expected a finite number, got {value!r}", key, "invalid_argument")
        target[key] = value
    return target


def _installed(package: str) -> Optional[str]:
    try:
        return _metadata.version(package)
    except _metadata.PackageNotFoundError:
        return None


def _installed_vllm(vllm_version: Optional[str], env: Dict[str, str]) -> Optional[str]:
    """Without ``vllm_version``: the vLLM installed in this interpreter's environment (what
    ``import vllm`` loads), as ``headroom check`` takes the one in site-packages; on v0.8 to v0.11.0
    whether FlashInfer is installed beside it decides the sampler's path, which ``env`` then
    states (unless it sets VLLM_USE_FLASHINFER_SAMPLER). HEADROOM_PYTHON_SITE in the environment
    turns this off, as it redirects the CLI's search."""
    if vllm_version is not None or "HEADROOM_PYTHON_SITE" in os.environ:
        return vllm_version
    installed = _installed("vllm")
    if installed is None:
        return None
    numbers = []
    for part in installed.split("+")[0].split(".")[:3]:
        digits = re.match(r"\d+", part)  # "0rc1" is 0: the release it precedes
        numbers.append(int(digits.group()) if digits else 0)
    release = tuple(numbers + [0] * (3 - len(numbers)))
    # The versions engine::sampler_path_from_install decides for the CLI (installed_vllm.cc).
    if (0, 8, 0) <= release < (0, 11, 1) and "VLLM_USE_FLASHINFER_SAMPLER" not in env:
        flashinfer = _installed("flashinfer-python") or _installed("flashinfer")
        env["VLLM_USE_FLASHINFER_SAMPLER"] = "1" if flashinfer else "0"
    return installed


def _hub_args(offline: Optional[bool], hub_timeout: Optional[float], hub_connect_timeout: Optional[float]) -> tuple:
    for key, value in (("hub_timeout", hub_timeout), ("hub_connect_timeout", hub_connect_timeout)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)):
            raise InvalidArgument(f"expected a number of seconds, got {value!r}", key, "invalid_argument")
    return (bool(offline), None if hub_timeout is None else float(hub_timeout),
            None if hub_connect_timeout is None else float(hub_connect_timeout))


def _db(db: Optional[PathLike]) -> str:
    if db is None:
        return ""
    value = os.fspath(db)
    return os.fsdecode(value) if isinstance(value, bytes) else value


def check(model: Any, gpu: Optional[str] = None, gpus: Optional[int] = None, *, nodes: Optional[int] = None,
          gpu_memory_gib: Optional[float] = None, used_gib: Optional[float] = None, free_gib: Optional[float] = None,
          vllm_version: Optional[str] = None, entrypoint: str = "llm", env: Optional[Mapping[str, str]] = None,
          offline: Optional[bool] = None, hub_timeout: Optional[float] = None,
          hub_connect_timeout: Optional[float] = None, db: Optional[PathLike] = None, use_history: bool = True,
          **engine_args: Any) -> Prediction:
    """Predicts vLLM's startup memory for ``model`` on ``gpus`` x ``gpu`` with vLLM's own keyword
    arguments (``tensor_parallel_size``, ``max_model_len``, ``gpu_memory_utilization``,
    ``quantization``, ``kv_cache_dtype``, ``enforce_eager``, ``max_num_seqs``, ...).

    model: a Hugging Face id, a folder with config.json or a config.json path; read from the local
    Hugging Face cache, headroom's Hub cache, the Hub (config and safetensors headers only), else
    the built-in catalogue. gpu: a catalogue name ("H100", "A100-40GB", "2xA100"); None probes this
    host's GPUs. gpus: how many (default: what the arguments use). entrypoint: "llm" (vllm.LLM,
    the default) or "serve" (vllm serve's batch defaults). env: VLLM_* variables of the run.
    vllm_version: the version modelled; by default the vLLM installed beside headroom (else the
    newest modelled).

    Returns a Prediction whose to_dict() equals ``headroom check ... --format json``. Raises
    TypeError for a keyword vLLM does not take, InvalidArgument for bad values, UnknownModel,
    UnknownGpu, HubError.
    """
    request: Dict[str, Any] = {"model": _model_ref(model), "flags": _engine_flags(engine_args, "check")}
    env_vars = dict(env or {})
    vllm_version = _installed_vllm(vllm_version, env_vars)
    request.update(_target(gpu, gpus, nodes, gpu_memory_gib, used_gib, free_gib, vllm_version))
    env_list = [f"{k}={v}" for k, v in env_vars.items()]
    offline_, timeout, connect = _hub_args(offline, hub_timeout, hub_connect_timeout)
    if not isinstance(entrypoint, str):
        raise InvalidArgument(f"expected 'llm' or 'serve', got {entrypoint!r}", "entrypoint", "invalid_argument")
    text, warnings_ = _call(_headroom.check, json.dumps(request), entrypoint, env_list, offline_, timeout, connect,
                            _db(db), not use_history)
    return Prediction(json.loads(text), warnings_)


def plan(model: Any, gpu: Optional[str] = None, gpus: Optional[int] = None, *, context: Optional[int] = None,
         concurrency: int = 1, goal: str = "throughput", max_gpus: Optional[int] = None,
         gpus_per_node: Optional[int] = None, nodes: Optional[int] = None, allow_fp8_kv: bool = False,
         allow_eager: bool = False, margin_gib: Optional[float] = None, gpu_memory_gib: Optional[float] = None,
         used_gib: Optional[float] = None, free_gib: Optional[float] = None, vllm_version: Optional[str] = None,
         revision: Optional[str] = None, offline: Optional[bool] = None, hub_timeout: Optional[float] = None,
         hub_connect_timeout: Optional[float] = None, db: Optional[PathLike] = None, use_history: bool = True,
         **kept_engine_args: Any) -> Plan:
    """Searches the vLLM configurations that fit ``model`` on the GPUs for ``context`` tokens and
    ``concurrency`` requests, as ``headroom plan``: returns a Plan whose to_dict() equals
    ``headroom plan ... --format json``. goal: "throughput", "latency" or "context".
    ``kept_engine_args``: the engine arguments every configuration keeps as given, as
    ``plan -- vllm serve MODEL --flag ...`` keeps them (quantization, dtype, hf_overrides, compilation_config, performance_mode, limit_mm_per_prompt,
    mm_processor_kwargs, mm_encoder_tp_mode, language_model_only, skip_mm_profiling)."""
    request: Dict[str, Any] = {"model": _model_ref(model), "concurrency": concurrency, "goal": goal,
                               "allow_fp8_kv": allow_fp8_kv, "allow_eager": allow_eager}
    if kept_engine_args:
        request["command"] = _kept_command(request["model"], kept_engine_args)
    for key, value in (("context", context), ("max_gpus", max_gpus), ("gpus_per_node", gpus_per_node)):
        if value is not None:
            request[key] = value
    if margin_gib is not None:
        if isinstance(margin_gib, bool) or not isinstance(margin_gib, (int, float)) or not math.isfinite(margin_gib):
            raise InvalidArgument(f"expected a number of GiB, got {margin_gib!r}", "margin_gib", "invalid_argument")
        request["margin_gib"] = float(margin_gib)
    request.update(_target(gpu, gpus, nodes, gpu_memory_gib, used_gib, free_gib, _installed_vllm(vllm_version, {})))
    offline_, timeout, connect = _hub_args(offline, hub_timeout, hub_connect_timeout)
    try:
        body = json.dumps(request, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise InvalidArgument(str(e), "", "invalid_argument") from None
    text, warnings_ = _call(_headroom.plan, body, offline_, timeout, connect, revision or "", _db(db), not use_history)
    return Plan(json.loads(text), warnings_)


def preflight(model: Any = None, *, gpu: Optional[str] = None, gpus: Optional[int] = None,
              vllm_version: Optional[str] = None, tight_concurrency: float = 1.25, **llm_kwargs: Any) -> Prediction:
    """One call before ``vllm.LLM(**llm_kwargs)``: the same keyword arguments, predicted on this
    host's GPUs (or ``gpu``/``gpus``).

        headroom.preflight(**llm_kwargs)
        llm = vllm.LLM(**llm_kwargs)

    Raises WillNotStart with the message vLLM is predicted to print and the ``changes`` that start
    it. Otherwise returns the Prediction, and warns (TightFit) when the fit is tight: fewer than
    ``tight_concurrency`` requests of max_model_len fit in the KV cache, or the low end of the
    prediction's range would not hold one.
    """
    if model is None:
        model = llm_kwargs.pop("model", None)
    if model is None:
        raise TypeError("preflight() missing the model: preflight(model=..., **llm_kwargs) as vllm.LLM takes it")
    prediction = check(model, gpu=gpu, gpus=gpus, vllm_version=vllm_version, entrypoint="llm", **llm_kwargs)
    if not prediction.starts:
        raise WillNotStart(prediction)
    _warn_if_tight(prediction, tight_concurrency)
    return prediction


def _warn_if_tight(p: Prediction, tight_concurrency: float) -> None:
    max_len = p.max_model_len or 0
    low = (p.kv_cache_range or {}).get("kv_tokens_low")
    if p.max_concurrency is not None and p.max_concurrency < tight_concurrency:
        warnings.warn(f"vLLM is predicted to start with little room: the KV cache holds {p.kv_cache_tokens:,} tokens, "
                      f"{p.max_concurrency:.2f}x a max_model_len {max_len:,} request", TightFit, stacklevel=3)
    elif isinstance(low, int) and max_len and low < max_len:
        warnings.warn(f"vLLM is predicted to start, but the low end of the prediction's range ({low:,} KV tokens) "
                      f"would not hold one max_model_len {max_len:,} request", TightFit, stacklevel=3)


def diagnose(log: Any, *, gpus: int = 0, kb: Sequence[PathLike] = ()) -> Diagnosis:
    """Names the failure in a vLLM log (``headroom diagnose``): ``log`` is a path (str, bytes or
    os.PathLike; plain or gzip) when such a file exists, else the log's text (str or bytes with a
    newline). Returns a Diagnosis whose to_dict() equals ``headroom diagnose LOG --format json``."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        raise InvalidArgument(f"expected a count of GPUs >= 0, got {gpus!r}", "gpus", "invalid_argument")
    kb_dirs = [_db(d) for d in kb]
    if isinstance(log, os.PathLike):
        text, warnings_ = _call(_headroom.diagnose_path, os.fsencode(log), gpus, kb_dirs)
    elif isinstance(log, (str, bytes)):
        data = log.encode("utf-8", "surrogateescape") if isinstance(log, str) else log
        is_text = b"\n" in data or len(data) > 4096
        if not is_text and data and os.path.exists(data):
            text, warnings_ = _call(_headroom.diagnose_path, data, gpus, kb_dirs)
        elif not is_text and data:
            raise InvalidArgument("no such file, and not a log's text (no newline)", os.fsdecode(data), "not_found")
        else:
            if len(data) > _MAX_LOG_TEXT_BYTES:
                raise InvalidArgument("log text over 1 GiB: pass the file's path instead", "log", "invalid_argument")
            text, warnings_ = _call(_headroom.diagnose_text, data, "<text>", gpus, kb_dirs)
    else:
        raise InvalidArgument(f"expected a path or the log's text, got {type(log).__name__}", "log", "invalid_argument")
    return Diagnosis(json.loads(text), warnings_)


def gpus(catalog: bool = False) -> Gpus:
    """This host's GPUs (NVML, else nvidia-smi), or with catalog=True the built-in catalogue
    (the names ``gpu=`` takes), as ``headroom gpus [--catalog] --format json``."""
    if catalog:
        return Gpus(json.loads(_headroom.gpu_catalog()))
    text, warnings_ = _call(_headroom.gpu_inventory)
    return Gpus(json.loads(text), warnings_)


def models(query: str = "") -> List[str]:
    """The ids of the built-in model catalogue that contain ``query`` (case-insensitive)."""
    if not isinstance(query, str):
        raise InvalidArgument(f"expected a string, got {type(query).__name__}", "query", "invalid_argument")
    q = query.lower()
    return [m for m in _headroom.catalog_model_ids() if q in m.lower()]


def record(log: Union[PathLike, Sequence[PathLike]], *, outcome: Optional[str] = None,
           db: Optional[PathLike] = None) -> Records:
    """Adds vLLM startup logs to the run history (``headroom record``): every log is read before the
    database is opened, so a bad log stores nothing. ``outcome``: "ok" or "failed" (default: from
    the log). Returns the records as ``headroom record --format json``."""
    logs = [log] if isinstance(log, (str, bytes, os.PathLike)) else list(log)
    paths = []
    for item in logs:
        if not isinstance(item, (str, bytes, os.PathLike)):
            raise InvalidArgument(f"expected a path, got {type(item).__name__}", "log", "invalid_argument")
        paths.append(os.fsencode(item))
    return Records(json.loads(_call(_headroom.record, paths, outcome or "", _db(db))))


def history(db: Optional[PathLike] = None, *, model: Optional[str] = None) -> Records:
    """The run history (``headroom history list --format json``) at ``db``, $HEADROOM_DB or the
    default location; a database that does not exist is an empty history. ``model``: only the
    records whose model contains it."""
    doc = json.loads(_call(_headroom.history, _db(db)))
    if model is not None:
        doc["records"] = [r for r in doc.get("records", []) if model.lower() in str(r.get("model", "")).lower()]
    return Records(doc)
