"""Old spellings of public keywords, kept working for one release with a DeprecationWarning."""
from __future__ import annotations

import functools
import warnings


def renamed(**names: str):
    """Decorate a public function whose keyword ``old`` is now ``new`` (``@renamed(backend="mode")``)."""

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for old, new in names.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {old}= and {new}= ({old}= is the old name of {new}=)")
                    warnings.warn(f"{fn.__name__}({old}=...) is now {fn.__name__}({new}=...); the old name goes in "
                                  "the next release", DeprecationWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper

    return deco


__all__ = ["renamed"]
