"""The exceptions headroom raises: one base class, a subclass per kind of problem.

Each carries the CLI's message (``message``) and where the problem is (``where``: the keyword,
``path:line:col`` or ``""``), so ``str(error)`` reads like ``headroom: error: ...`` without the prefix.
"""
from __future__ import annotations

from typing import Any, List, Optional


class Error(Exception):
    """Base class of headroom's errors: ``message`` says what was expected and what was found,
    ``where`` names the keyword or the file position, ``code`` is the library's error code."""

    def __init__(self, message: str, where: str = "", code: str = "internal") -> None:
        self.message = message
        self.where = where
        self.code = code
        super().__init__(f"{where}: {message}" if where else message)


class InvalidArgument(Error, ValueError):
    """A keyword or value headroom (or vLLM) does not accept: a negative size, NaN, a bad dtype."""


class UnknownModel(Error, LookupError):
    """A model that is neither a local folder, in the Hugging Face cache, on the Hub, nor in the catalogue."""


class UnknownGpu(Error, LookupError):
    """A GPU name the catalogue does not hold (``headroom.gpus(catalog=True)`` lists the names)."""


class HubError(Error, OSError):
    """The Hugging Face Hub could not be reached or refused the request (gated repo, rate limit)."""


class WillNotStart(Error):
    """Raised by :func:`headroom.preflight`: vLLM is predicted to fail at startup.

    ``message`` is the message vLLM is predicted to print, ``phase`` and ``error_class`` say where
    it fails, ``changes`` lists single changes of the engine arguments that are predicted to start
    (each with ``engine_args`` to pass to ``vllm.LLM``), and ``prediction`` is the whole prediction.
    """

    def __init__(self, prediction: Any) -> None:
        failure = prediction.failure
        self.prediction = prediction
        self.changes: List[Any] = list(prediction.changes)
        self.phase: Optional[str] = failure.phase if failure else None
        self.error_class: Optional[str] = failure.error_class if failure else None
        message = failure.message if failure else "vLLM is predicted not to start"
        super().__init__(message, "", "negative_verdict")

    def __str__(self) -> str:
        lines = [self.message]
        if self.changes:
            lines.append("to start, change one of (each predicted the same way):")
            lines += [f"  {c.describe()}: {c.why}" for c in self.changes]
        return "\n".join(lines)


class TightFit(UserWarning):
    """Warned by :func:`headroom.preflight` when vLLM is predicted to start with little room."""


_KINDS = {"model": UnknownModel, "gpu": UnknownGpu, "hub": HubError, "argument": InvalidArgument}


def python_where(where: str) -> str:
    """The CLI names options (``--gpu-memory-gib``) and request keys (``flags.max_model_len``);
    Python users wrote keywords (``gpu_memory_gib``, ``max_model_len``)."""
    if where.startswith("flags."):
        where = where[len("flags."):]
    if where.startswith("--") and " " not in where and ":" not in where:
        where = where[2:].replace("-", "_")
    return where


def from_library(exc: BaseException) -> Error:
    """The headroom.Error subclass for a _headroom.LibraryError(kind, code, message, where)."""
    kind, code, message, where = exc.args
    return _KINDS.get(kind, Error)(message, python_where(where), code)
