"""Progress bars on stderr (tqdm), shown only when someone is watching.

    with bar(total=len(points), desc="explore") as b:   # a counter
        for p in points:
            ...
            b.update(1)
    for i in bar(range(layers), desc="prefill", unit="layer"):   # an iterable
        ...
    r = run([cxx, *flags], desc="g++ gemm")   # a subprocess, its bar ticking the elapsed time
    with waiting("building the tokenizer"):   # a long call of someone else's, the elapsed time ticking
        ...

When bars show (the first rule that applies wins):

1. ``quiet=True`` / ``quiet=False`` given to :func:`bar` or :func:`run`;
2. :func:`set_quiet` (the command line's ``--quiet`` / ``-q``) turns them off;
3. ``STREAMDSL_QUIET=1`` turns them off;
4. ``STREAMDSL_PROGRESS=1`` turns them on even when stderr is not a terminal (tests, logs),
   ``STREAMDSL_PROGRESS=0`` off;
5. otherwise they show when stderr is a terminal.

Bars only ever write to stderr, so stdout stays the command's result.  When
off, :func:`bar` returns a do-nothing object whose iteration is the
iterable's own iterator: a hooked hot loop pays one check per bar, not per
step.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time

_quiet: bool | None = None  # set by set_quiet (the command line's --quiet)


def set_quiet(quiet: bool | None) -> None:
    """Turn bars off for this process (``True``), or go back to the environment's rule (``None``)."""
    global _quiet
    _quiet = quiet


def enabled(quiet: bool | None = None) -> bool:
    """Whether a bar created now would show (see the module docstring for the rules)."""
    if quiet is not None:
        return not quiet
    if _quiet:
        return False
    if os.environ.get("STREAMDSL_QUIET", "") not in ("", "0"):
        return False
    forced = os.environ.get("STREAMDSL_PROGRESS", "")
    if forced:
        return forced != "0"
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return False


class _Off:
    """The bar that is not shown: the same methods as a tqdm bar, doing nothing."""

    __slots__ = ("iterable", "total", "n")

    def __init__(self, iterable, total):
        self.iterable, self.total, self.n = iterable, total, 0

    def __iter__(self):
        return iter(self.iterable if self.iterable is not None else ())

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def update(self, n: float = 1) -> None:
        self.n += n

    def set_description(self, desc: str = "", refresh: bool = True) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


def bar(iterable=None, *, total: float | None = None, desc: str = "", unit: str = "it", quiet: bool | None = None,
        leave: bool | None = None):
    """A progress bar over ``iterable`` or counting to ``total``; a context manager and an iterable.

    ``leave=None`` keeps an outermost bar on screen when it ends and clears a
    nested one (tqdm's rule).  Returns a ``tqdm`` when bars show, else a
    do-nothing stand-in with the same ``update``/``set_description``/
    ``set_postfix_str``/``refresh``/``close``.
    """
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)
    if not enabled(quiet):
        return _Off(iterable, total)
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=leave, dynamic_ncols=True,
                mininterval=0.1)


def run(cmd: list[str], *, desc: str, timeout: float | None = None, quiet: bool | None = None,
        tick: float = 0.2, env: dict | None = None, delay: float = 0.0) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)`` with a bar showing the
    elapsed time.

    ``delay``: the bar appears only once the command has run that many seconds (a quick one shows nothing).

    Raises ``subprocess.TimeoutExpired`` like ``subprocess.run`` (the process is killed first).
    """
    if not enabled(quiet):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    from tqdm import tqdm

    start = time.monotonic()
    with tqdm(total=None, desc=desc, file=sys.stderr, leave=None, dynamic_ncols=True,
              bar_format="{desc}: {elapsed}", delay=delay) as b:
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
            while True:
                try:  # communicate keeps what it read when it times out, so polling loses no output
                    out, err = proc.communicate(timeout=tick)
                    break
                except subprocess.TimeoutExpired:
                    if timeout is not None and time.monotonic() - start > timeout:
                        proc.kill()
                        out, err = proc.communicate()
                        raise subprocess.TimeoutExpired(cmd, timeout, out, err) from None
                    b.refresh()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@contextlib.contextmanager
def waiting(desc: str, *, quiet: bool | None = None, tick: float = 0.2):
    """A bar ticking the elapsed time while the block runs (a long call that reports no progress of its own)."""
    if not enabled(quiet):
        yield
        return
    from tqdm import tqdm

    done = threading.Event()
    with tqdm(total=None, desc=desc, file=sys.stderr, leave=None, dynamic_ncols=True,
              bar_format="{desc}: {elapsed}") as b:
        def tick_until_done() -> None:
            while not done.wait(tick):
                b.refresh()

        ticker = threading.Thread(target=tick_until_done, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()


__all__ = ["bar", "enabled", "run", "set_quiet", "waiting"]
