"""``ModelPerf``: what the report and the roofline read of a whole model's performance.

A model library composes a model from layer designs (each a :class:`~.model.DesignPerf`) run one after
another, a prompt prefilled then tokens decoded; it subclasses :class:`ModelPerf` (the LLM library's
``LLMPerf``), and ``write_report``, ``perf_html`` and ``viz.roofline_png`` take any subclass.  The core reads
nothing else of it, so it needs to know nothing of the library.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from ..boards import Board


class ModelPerf(ABC):
    """A whole model on a board.  Besides the members below, a subclass has the attributes ``board`` (a
    :class:`~streamdsl.boards.Board`), ``prompt`` and ``gen`` (tokens prefilled, tokens decoded) and ``layers``:
    one entry per kind of layer, each with ``kind``, ``count`` (layers of that kind), ``decode`` and
    ``prefill`` (the DesignPerf of its one-token and its prompt layer)."""

    board: Board
    prompt: int
    gen: int
    layers: list

    @property
    @abstractmethod
    def name(self) -> str:
        """The model's name, for titles."""

    @property
    @abstractmethod
    def clock_mhz(self) -> float: ...

    @property
    @abstractmethod
    def ttft_s(self) -> float:
        """Time to the first token: the prompt's prefill through every layer."""

    @property
    @abstractmethod
    def decode_s(self) -> float:
        """Seconds per decoded token."""

    @property
    @abstractmethod
    def tokens_per_s(self) -> float: ...

    @property
    @abstractmethod
    def latency_s(self) -> float:
        """The prompt prefilled and ``gen`` tokens decoded."""

    @property
    @abstractmethod
    def hbm_roofline_tps(self) -> float:
        """Tokens/s if each token only read every weight once at the board's full memory bandwidth."""

    @property
    @abstractmethod
    def fp32_roofline_tps(self) -> float: ...

    @property
    @abstractmethod
    def int8_roofline_tps(self) -> float | None: ...

    @abstractmethod
    def ops_per_token(self) -> int: ...

    @abstractmethod
    def bytes_per_token(self) -> dict[str, int]:
        """Off-chip bytes of one decode step by kind of tensor: ``weights``, ``kv``, ``act``."""

    @abstractmethod
    def assumptions(self) -> list[str]: ...

    @abstractmethod
    def gaps(self) -> list[str]:
        """Why the modeled rate falls short of its targets, from the model's own numbers."""

    @abstractmethod
    def report(self) -> str: ...


__all__ = ["ModelPerf"]
