"""g++ builds of C-simulation sources, cached by content: a kernel's testbench (``HLSProject.csim``) and an LLM
project's generate kernel (``streamdsl.library.llm.device.csim``) compile the same way, once per set of sources,
headers and flags, into ``$STREAMDSL_CACHE`` (default ``~/.cache/streamdsl``)."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from ...errors import StreamDSLError
from ...progress import run as run_with_progress


class CSimError(StreamDSLError):
    kind = "C-simulation error"


def cache_root() -> Path:
    return Path(os.environ.get("STREAMDSL_CACHE", Path.home() / ".cache" / "streamdsl"))


def compiled(files: dict[str, bytes | str], flags: list[str], what: str, kind: str, *,
             local_includes: tuple[str, ...] = (), includes: tuple[Path, ...] = (), desc: str = "g++") -> Path:
    """The binary g++ makes of ``files`` (a path relative to the sources' folder -> its text): the ``.cpp`` files
    at the top of the folder compiled with ``flags``, the folder, its ``local_includes`` sub-folders and
    ``includes`` (whose ``.h`` files count as sources) on the include path.  Taken from the cache's ``kind``
    folder when the same sources, headers and flags were compiled before; otherwise compiled in a temporary
    folder there and moved in whole, so a concurrent or interrupted build never leaves half a binary.
    ``what`` names the sources in the error g++'s failure raises."""
    cxx = shutil.which("g++")
    if cxx is None:
        raise CSimError("g++ is not installed; C-simulation needs a C++17 compiler",
                        hint="install g++ (Debian: apt install g++)")
    data = {name: text.encode() if isinstance(text, str) else text for name, text in files.items()}
    h = hashlib.sha256(" ".join(flags).encode() + b"\0" + " ".join(local_includes).encode() + b"\0")
    for name in sorted(data):
        h.update(name.encode() + b"\0" + data[name] + b"\0")
    for inc in includes:
        h.update(str(inc).encode() + b"\0")
        for hdr in sorted(Path(inc).glob("*.h")):
            h.update(hdr.name.encode() + b"\0" + hdr.read_bytes() + b"\0")
    cache = cache_root() / kind / h.hexdigest()[:24]
    binary = cache / "tb"
    if binary.exists():
        return binary
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sd-build-", dir=cache) as tmp:
        for name, blob in data.items():
            path = Path(tmp, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)
        srcs = [str(Path(tmp, n)) for n in sorted(data) if n.endswith(".cpp") and "/" not in n]
        incs = [tmp, *(str(Path(tmp, i)) for i in local_includes), *map(str, includes)]
        cmd = [cxx, *flags, *(f"-I{i}" for i in incs), *srcs, "-o", str(Path(tmp, "tb"))]
        r = run_with_progress(cmd, desc=desc)
        if r.returncode != 0:
            raise CSimError(f"g++ could not compile {what}:\n{r.stderr.strip()[:4000]}",
                            hint="this is a streamdsl bug; please report it")
        os.replace(Path(tmp, "tb"), binary)
    return binary


__all__ = ["CSimError", "cache_root", "compiled"]
