"""Typed views of headroom's JSON documents. Each result keeps the document the library rendered
(the same renderer as the CLI's ``--format json``) and reads its attributes from it, so
``to_dict()`` is exactly what ``headroom check|plan|diagnose ... --format json`` prints."""
from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Optional

from . import _display


class _Document:
    """A result backed by one JSON document."""

    def __init__(self, document: Dict[str, Any], warnings: Optional[List[str]] = None) -> None:
        self._doc = document
        self.warnings: List[str] = list(warnings or [])

    def to_dict(self) -> Dict[str, Any]:
        """The document as ``--format json`` prints it (a deep copy)."""
        return copy.deepcopy(self._doc)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._doc == self._doc  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


class Memory:
    """vLLM's startup memory accounting per GPU, in GiB (2^30 bytes, as vLLM prints)."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self.total_gib: float = d.get("total_gib")
        self.budget_gib: float = d.get("budget_gib")
        self.weights_gib: float = d.get("weights_gib")
        self.activation_peak_gib: float = d.get("activation_peak_gib")
        self.non_torch_gib: float = d.get("non_torch_gib")
        self.cuda_graph_gib: float = d.get("cuda_graph_gib")
        self.cuda_graph_in_budget: bool = d.get("cuda_graph_in_budget")
        self.kv_cache_gib: float = d.get("kv_cache_gib")
        self.outside_budget_gib: float = d.get("outside_budget_gib")
        self.baseline_gib: float = d.get("baseline_gib")
        # The CUDA context and other processes where the version charges them to the budget
        # (V0 v0.6.4, V1 before v0.9.1); 0 elsewhere.
        self.charged_baseline_gib: float = d.get("charged_baseline_gib")

    def __repr__(self) -> str:
        return (f"Memory(total_gib={self.total_gib}, weights_gib={self.weights_gib}, "
                f"kv_cache_gib={self.kv_cache_gib}, budget_gib={self.budget_gib})")


class Failure:
    """Where vLLM is predicted to fail: the startup ``phase``, headroom's ``error_class`` and the
    ``message`` vLLM prints."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self.phase: str = d.get("phase", "")
        self.error_class: str = d.get("class", "")
        self.message: str = d.get("message", "")

    def __repr__(self) -> str:
        return f"Failure(phase={self.phase!r}, error_class={self.error_class!r})"


def _engine_value(text: str) -> Any:
    if text.startswith(("{", "[")):  # --limit-mm-per-prompt, --mm-processor-kwargs: vllm.LLM takes the dict
        try:
            return json.loads(text)
        except ValueError:
            pass
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


class Change:
    """One change of the engine arguments that is predicted to start vLLM."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self.set: Dict[str, str] = dict(d.get("set") or {})
        self.remove: List[str] = list(d.get("remove") or [])
        self.gpus: int = d.get("gpus")
        self.kv_cache_tokens: int = d.get("kv_cache_tokens")
        self.max_concurrency: float = d.get("max_concurrency")
        self.why: str = d.get("why", "")

    @property
    def engine_args(self) -> Dict[str, Any]:
        """The change as ``vllm.LLM`` keyword arguments: ``{"max_model_len": 32768}``; removed flags map to None."""
        out: Dict[str, Any] = {}
        for flag, value in self.set.items():
            out[flag.lstrip("-").replace("-", "_")] = True if value == "" else _engine_value(value)
        for flag in self.remove:
            out[flag.lstrip("-").replace("-", "_")] = None
        return out

    def describe(self) -> str:
        """``max_model_len=32768``: the change as keyword arguments."""
        return ", ".join(f"{k}={v!r}" for k, v in self.engine_args.items())

    def __repr__(self) -> str:
        return f"Change({self.describe()}, kv_cache_tokens={self.kv_cache_tokens})"


class Prediction(_Document):
    """vLLM's predicted startup: ``starts``, the memory per GPU, the KV cache capacity, and when it
    fails, ``failure`` and the ``changes`` that start it. ``to_dict()`` equals ``headroom check
    --format json`` for the same inputs."""

    @property
    def starts(self) -> bool:
        return self._doc.get("outcome") == "ok"

    @property
    def outcome(self) -> str:
        return self._doc.get("outcome", "")

    @property
    def kv_cache_tokens(self) -> int:
        return self._doc.get("kv_cache_tokens")

    @property
    def num_gpu_blocks(self) -> int:
        return self._doc.get("num_gpu_blocks")

    @property
    def max_concurrency(self) -> float:
        return self._doc.get("max_concurrency")

    @property
    def largest_fitting_max_model_len(self) -> Optional[int]:
        return self._doc.get("largest_fitting_max_model_len")

    @property
    def max_model_len(self) -> Optional[int]:
        return (self._doc.get("settings") or {}).get("max_model_len")

    @property
    def memory(self) -> Memory:
        return Memory(self._doc.get("memory") or {})

    @property
    def failure(self) -> Optional[Failure]:
        f = self._doc.get("failure")
        return Failure(f) if f else None

    @property
    def changes(self) -> List[Change]:
        return [Change(c) for c in self._doc.get("changes") or []]

    @property
    def settings(self) -> Dict[str, Any]:
        """The engine settings vLLM would run with (defaults filled in)."""
        return dict(self._doc.get("settings") or {})

    @property
    def model(self) -> Dict[str, Any]:
        return dict(self._doc.get("model") or {})

    @property
    def gpu(self) -> Dict[str, Any]:
        return dict(self._doc.get("gpu") or {})

    @property
    def kv_cache_range(self) -> Optional[Dict[str, Any]]:
        return self._doc.get("kv_cache_range")

    @property
    def notes(self) -> List[str]:
        return list(self._doc.get("notes") or [])

    @property
    def vllm_version(self) -> str:
        return self._doc.get("vllm_version", "")

    def __repr__(self) -> str:
        return f"<headroom.Prediction {_display.prediction_summary(self._doc)}>"

    def __str__(self) -> str:
        return _display.prediction_text(self._doc)

    def _repr_html_(self) -> str:
        return _display.prediction_html(self._doc)


class PlannedConfig:
    """One configuration of a plan: its ``engine_args`` (as ``vllm.LLM`` keywords), its
    ``prediction`` and the ways to start it (``renderings``: python, vllm serve, ...)."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self._d = d
        self.label: str = d.get("label", "")
        self.settings: Dict[str, Any] = dict(d.get("settings") or {})
        self.renderings: Dict[str, str] = dict(d.get("renderings") or {})
        self.prediction = Prediction(d.get("prediction") or {})

    def __repr__(self) -> str:
        return f"<headroom.PlannedConfig {self.label!r}: {_display.prediction_summary(self.prediction._doc)}>"


class Plan(_Document):
    """The configurations that fit a model on the GPUs: ``recommended`` (None when nothing fits,
    then ``no_fit`` says why), ``alternatives`` and the ``explanation``. ``to_dict()`` equals
    ``headroom plan --format json``."""

    @property
    def recommended(self) -> Optional[PlannedConfig]:
        r = self._doc.get("recommended")
        return PlannedConfig(r) if r else None

    @property
    def alternatives(self) -> List[PlannedConfig]:
        return [PlannedConfig(a) for a in self._doc.get("alternatives") or []]

    @property
    def explanation(self) -> List[str]:
        return list(self._doc.get("explanation") or [])

    @property
    def no_fit(self) -> Any:
        return self._doc.get("no_fit")

    @property
    def outcome(self) -> str:
        return self._doc.get("outcome", "")

    def __repr__(self) -> str:
        r = self.recommended
        return f"<headroom.Plan {r.label + ': ' + _display.prediction_summary(r.prediction._doc) if r else 'nothing fits'}>"

    def __str__(self) -> str:
        return _display.plan_text(self._doc)

    def _repr_html_(self) -> str:
        return _display.plan_html(self._doc)


class Diagnosis(_Document):
    """What failed in a vLLM log: the ``primary`` finding (None when none), the ``fixes`` with the
    flags that fix it, other ``findings`` and the ``run`` read from the log. ``to_dict()`` equals
    ``headroom diagnose LOG --format json``."""

    @property
    def failure_found(self) -> bool:
        return bool(self._doc.get("failure_found"))

    @property
    def primary(self) -> Optional[Dict[str, Any]]:
        return self._doc.get("primary")

    @property
    def error_class(self) -> Optional[str]:
        p = self._doc.get("primary")
        return p.get("class") if p else None

    @property
    def message(self) -> Optional[str]:
        p = self._doc.get("primary")
        return p.get("message") if p else None

    @property
    def fixes(self) -> List[Dict[str, Any]]:
        return list(self._doc.get("fixes") or [])

    @property
    def findings(self) -> List[Dict[str, Any]]:
        return list(self._doc.get("findings") or [])

    @property
    def run(self) -> Dict[str, Any]:
        return dict(self._doc.get("run") or {})

    def __repr__(self) -> str:
        if self.error_class:
            return f"<headroom.Diagnosis {self.error_class}>"
        # A failure with class None: only vLLM's wrapper says the engine died, not why.
        return "<headroom.Diagnosis failure with no class>" if self.failure_found else "<headroom.Diagnosis no failure found>"


class Records(_Document):
    """Run-history records (``record`` and ``history``): ``records`` and the ``database`` they are in."""

    @property
    def records(self) -> List[Dict[str, Any]]:
        return list(self._doc.get("records") or [])

    @property
    def database(self) -> Optional[str]:
        return self._doc.get("database")

    def __len__(self) -> int:
        return len(self._doc.get("records") or [])

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.records)

    def __repr__(self) -> str:
        return f"<headroom.Records {len(self)} in {self.database or 'no database'}>"


class Gpus(_Document):
    """The GPU catalogue or this host's GPUs, as ``headroom gpus [--catalog] --format json``."""

    @property
    def gpus(self) -> List[Dict[str, Any]]:
        return list(self._doc.get("gpus") or [])

    def __len__(self) -> int:
        return len(self.gpus)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.gpus)

    def __repr__(self) -> str:
        return f"<headroom.Gpus {len(self)} GPUs>"
