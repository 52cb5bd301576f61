"""A folder streamdsl writes a project into, and the promise that it touches nothing else there.

The folder's manifest (``.streamdsl-manifest``, one relative path a line) lists every file and folder
streamdsl wrote into it.  A build writes a path only when it is new or listed there: a file or folder of the
user's at a path the build wants (their own ``include/ap_int.h``) is refused, even with ``overwrite=True``,
which only lets the build share a folder with files of other names.  Nothing is written through a symbolic
link inside the folder (a link is never the build's: it makes none), and every check is made before the
first byte is written, so a refused build leaves the folder as it was.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import StreamDSLError

MANIFEST = ".streamdsl-manifest"


class OutputFolderError(StreamDSLError):
    """An output folder streamdsl may not, or cannot, write into."""

    kind = "output folder error"


def plain_parts(rel: str) -> tuple[str, ...] | None:
    """The components of ``rel`` when it is a relative path of plain names (no ``..``, no root, no drive,
    no backslash or NUL), else None: the only paths a project file may name."""
    if not isinstance(rel, str) or not rel or "\\" in rel or "\0" in rel:
        return None
    parts = tuple(rel.split("/"))  # as written: "a/./b" and "a//b" are refused, not normalised
    if any(part in ("", ".", "..") for part in parts) or ":" in parts[0]:
        return None
    return parts


class OutputFolder:
    """``path`` as a build's output: :meth:`check` it before building, :meth:`write` the files after."""

    def __init__(self, path, overwrite: bool = False, *, what: str = "output"):
        self.path = Path(path)
        self.overwrite = overwrite
        self.what = what  # how errors name it ("-o", "output")

    def __repr__(self) -> str:
        return f"<OutputFolder {self.path}>"

    # ------------------------------------------------------------------ what is ours
    def owned(self) -> set[str]:
        m = self.path / MANIFEST
        if m.is_symlink():
            raise OutputFolderError(f"'{m}' is a symbolic link; streamdsl does not follow links in its folders",
                                    hint="remove the link, or choose a new folder")
        return set(m.read_text().splitlines()) - {""} if m.is_file() else set()

    def check(self) -> None:
        """The folder can be made (or is a folder) and holds nothing of the user's unless ``overwrite``."""
        p = self.path
        if p.exists() and not p.is_dir():
            raise OutputFolderError(f"{self.what} '{p}' is a file, not a folder", hint="give a new or empty folder")
        if not p.exists():
            up = p.parent
            while not up.exists() and up != up.parent:
                up = up.parent
            if up.exists() and not up.is_dir():
                raise OutputFolderError(f"{self.what} '{p}' cannot be made: '{up}' is a file",
                                        hint="give a folder whose parents are folders")
            if not os.access(up, os.W_OK | os.X_OK):
                raise OutputFolderError(f"{self.what} '{p}' cannot be made: '{up}' is not writable",
                                        hint="choose a folder you can write to")
            return
        if not os.access(p, os.W_OK | os.X_OK):
            raise OutputFolderError(f"{self.what} '{p}' is not writable", hint="choose a folder you can write to")
        ours = self.owned() | {MANIFEST}
        foreign = sorted(e.name for e in p.iterdir() if e.name not in ours)
        if foreign and not self.overwrite:
            raise OutputFolderError(
                f"{self.what} '{p}' holds files streamdsl did not write: {', '.join(foreign[:5])}"
                + (" ..." if len(foreign) > 5 else ""),
                hint="choose a new or empty folder, or pass overwrite=True (--force) to write beside them "
                     "(streamdsl's own files are replaced; the others, and any path it would need that holds "
                     "one of them, are left alone)")

    def _refusal(self, rel: str, ours: set[str]) -> str | None:
        """Why ``rel`` may not be written (None: it may): a link, or a path of the user's on the way."""
        parts = plain_parts(rel)
        if parts is None:
            return f"'{rel}' is not a plain relative path"
        for n in range(1, len(parts) + 1):
            sub = "/".join(parts[:n])
            q = self.path.joinpath(*parts[:n])
            if q.is_symlink():
                return f"'{q}' is a symbolic link streamdsl did not make (it never writes through one)"
            if q.exists() and sub not in ours:
                return f"'{q}' exists and streamdsl did not write it"
            if n < len(parts) and q.exists() and not q.is_dir():
                return f"'{q}' is a file"
        return None

    # ------------------------------------------------------------------ writing
    def write(self, files: dict[str, str | bytes | np.ndarray], dirs: tuple[str, ...] = ()) -> None:
        """Write ``files`` (relative path -> text, bytes or an array's raw bytes) and make ``dirs``, after
        checking every path; the manifest then lists them."""
        self.check()
        ours = self.owned()
        paths = list(dirs) + list(files)
        bad = [(rel, why) for rel in paths if (why := self._refusal(rel, ours)) is not None]
        if bad:
            raise OutputFolderError(f"{self.what} '{self.path}': " + "; ".join(why for _rel, why in bad[:3])
                                    + (f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""),
                                    hint="remove or rename the user's paths, or choose a new folder; streamdsl "
                                         "replaces only what its manifest says it wrote")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            made = set()
            for rel in paths:
                parts = plain_parts(rel)
                dirs_of = parts if rel in dirs else parts[:-1]
                for n in range(1, len(dirs_of) + 1):
                    made.add("/".join(dirs_of[:n]))
                    self.path.joinpath(*dirs_of[:n]).mkdir(exist_ok=True)
            for rel, data in files.items():
                _write_new(self.path / rel, data)
            _write_new(self.path / MANIFEST, "\n".join(sorted(ours | made | set(files))) + "\n")
        except OSError as err:
            raise OutputFolderError(f"cannot write into {self.what} '{self.path}': {err.strerror or err}"
                                    + (f" ({err.filename})" if err.filename else ""),
                                    hint="check the path and its permissions") from None

    def sub(self, rel: str) -> OutputFolder:
        """The folder ``rel`` inside this one, made and listed as streamdsl's, as an output of its own."""
        self.write({}, dirs=(rel,))
        return OutputFolder(self.path / rel, overwrite=self.overwrite, what=self.what)


def _write_new(path: Path, data) -> None:
    """Write ``data`` to ``path`` without following a link there (checked before; this closes the race)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as f:
        if isinstance(data, np.ndarray):
            np.ascontiguousarray(data).tofile(f)
        else:
            f.write(data.encode() if isinstance(data, str) else data)
