"""The ``streamdsl`` command: simulate, build and generate from the shell.

    streamdsl sim FILE.py:KERNEL --inputs a.npy b.npy -o out.npy
    streamdsl build FILE.py:NAME --target hls --board u55c -o DIR
    streamdsl report FILE.py:DATAFLOW --board u55c
    streamdsl explore FILE.py:DATAFLOW --board u55c
    streamdsl llm build llama --config tiny --quant w8a8 -o DIR
    streamdsl llm generate smollm2 "The capital of France is" --max-new-tokens 4

``NAME`` is a kernel, a dataflow function, or a schedule of either defined at
the top level of ``FILE.py``.  Exit codes: 0 success, 1 a user error (printed
as the located streamdsl error), 2 bad usage (argparse).
"""
from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

import numpy as np

from .errors import StreamDSLError


class CLIError(StreamDSLError):
    kind = "error"


def _load(target: str):
    """``FILE.py:NAME`` -> the object NAME defined in FILE.py."""
    file, sep, name = target.rpartition(":")
    if not sep or not file or not name:
        raise CLIError(f"expected FILE.py:NAME, got {target!r}", hint="e.g. examples/gemm.py:gemm")
    path = Path(file)
    if not path.is_file():
        raise CLIError(f"no such file: {file}", hint="give the path of a Python file that defines the kernel")
    try:
        scope = runpy.run_path(str(path), run_name="__streamdsl_cli__")
    except StreamDSLError:
        raise
    except Exception as err:  # the user's module failed to import: show its own error
        raise CLIError(f"{file} failed to run: {type(err).__name__}: {err}", hint="run it with python to see the traceback") from None
    if name not in scope:
        names = sorted(k for k, v in scope.items() if _kind(v))
        raise CLIError(f"{file} defines no {name!r}", hint=f"it defines: {', '.join(names) or 'no kernels or dataflows'}")
    obj = scope[name]
    if not _kind(obj):
        raise CLIError(f"{name!r} in {file} is a {type(obj).__name__}, not a kernel, dataflow or schedule",
                       hint="decorate it with @sd.kernel or @sd.dataflow")
    return obj


def _kind(obj) -> str | None:
    from .api import KernelFunction
    from .dataflow.dfschedule import DataflowSchedule
    from .dataflow.graph import DataflowFunction
    from .schedule.schedule import Schedule

    for cls, kind in ((KernelFunction, "kernel"), (DataflowFunction, "dataflow"), (Schedule, "schedule"),
                      (DataflowSchedule, "dataflow schedule")):
        if isinstance(obj, cls):
            return kind
    return None


def _read_input(text: str):
    if text.endswith(".npy"):
        if not Path(text).is_file():
            raise CLIError(f"no such input file: {text}", hint="inputs are .npy files or numbers")
        return np.load(text)
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise CLIError(f"input {text!r} is neither a .npy file nor a number", hint="e.g. --inputs a.npy 0.5") from None


def cmd_sim(args) -> int:
    obj = _load(args.target)
    kind = _kind(obj)
    if kind not in ("kernel", "dataflow"):
        raise CLIError(f"sim runs a kernel or dataflow function, {args.target} is a {kind}",
                       hint="name the @sd.kernel / @sd.dataflow function itself")
    outs = obj(*[_read_input(x) for x in args.inputs])
    outs = outs if isinstance(outs, tuple) else (outs,)
    for n, v in enumerate(outs):
        dest = args.output if len(outs) == 1 else (f"{Path(args.output).with_suffix('')}_{n}.npy" if args.output else None)
        if dest:
            np.save(dest, np.asarray(v))
        print(f"result {n}: {np.shape(v)} {np.asarray(v).dtype}" + (f" -> {dest}" if dest else ""))
    return 0


def cmd_build(args) -> int:
    from .api import schedule

    obj = _load(args.target)
    kind = _kind(obj)
    s = obj if "schedule" in kind else schedule(obj)
    if kind == "dataflow":
        s.fuse(*s.tasks())  # a bare dataflow builds as one on-chip region
        s.size_fifos()
    prj = s.build(args.target_kind, output=args.output, board=args.board, overwrite=args.overwrite)
    print(f"wrote {prj}")
    return 0


def _dataflow_schedule(target: str):
    """A dataflow schedule from ``FILE.py:NAME``: the user's own, or one region of a bare dataflow, FIFOs sized."""
    from .api import schedule

    obj = _load(target)
    kind = _kind(obj)
    if kind == "dataflow schedule":
        return obj
    if kind != "dataflow":
        raise CLIError(f"{target} is a {kind}; report and explore take a dataflow or its schedule",
                       hint="name an @sd.dataflow function or a DataflowSchedule (g = sd.schedule(fn))")
    g = schedule(obj)
    g.fuse(*g.tasks())
    g.size_fifos()
    return g


def cmd_report(args) -> int:
    from .perf import model_design

    print(model_design(_dataflow_schedule(args.target), args.board).report())
    return 0


def cmd_explore(args) -> int:
    from .perf import explore

    ex = explore(_dataflow_schedule(args.target), args.board, args.budget)
    print(ex.table())
    print(ex.report())
    return 0


def cmd_llm_build(args) -> int:
    from .library.llm.config import preset, tiny
    from .library.llm.models import model
    from .library.llm.weights import random_weights

    full = {"gpt2": "gpt2-medium", "llama": "llama-3.2-1b", "qwen2": "qwen2.5-0.5b", "gemma3": "gemma-3-1b"}
    config = tiny(args.family) if args.config == "tiny" else preset(full[args.family])
    m = model(config, max_len=args.max_len, quant=args.quant)
    if args.config == "tiny":
        m.load(random_weights(config, seed=0))  # full-size projects are built without weights
    prj = m.build("hls", output=args.output, prefill_len=min(args.prefill_len, args.max_len), overwrite=args.overwrite)
    print(f"wrote {prj}")
    return 0


def cmd_llm_generate(args) -> int:
    from .library.llm.gguf_loader import load_smollm2
    from .library.llm.models import llama

    config, weights, tokenizer = load_smollm2()
    ids = tokenizer(args.prompt).input_ids
    m = llama(config, max_len=len(ids) + args.max_new_tokens).load(weights)
    new = m.generate(ids, args.max_new_tokens, backend=args.backend)
    print(args.prompt + tokenizer.decode(new))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="streamdsl", description="streamdsl: a Python HLS DSL for dataflow accelerators")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("sim", help="run a kernel or dataflow on the reference simulator")
    s.add_argument("target", metavar="FILE.py:KERNEL")
    s.add_argument("--inputs", nargs="*", default=[], metavar="X", help="arguments in order: .npy files or numbers")
    s.add_argument("-o", "--output", help="where to save the result (.npy; several results get _0, _1, ...)")
    s.set_defaults(run=cmd_sim)

    b = sub.add_parser("build", help="write the Vitis HLS project of a kernel, dataflow or schedule")
    b.add_argument("target", metavar="FILE.py:NAME")
    b.add_argument("--target", dest="target_kind", default="hls", choices=["hls"], help="the backend (hls)")
    b.add_argument("--board", default="u55c", help="u55c, u280 or vck190")
    b.add_argument("-o", "--output", required=True, metavar="DIR")
    b.add_argument("--overwrite", action="store_true", help="write into a folder that holds other files")
    b.set_defaults(run=cmd_build)

    r = sub.add_parser("report", help="model a dataflow design on a board: latency, resources, rooflines")
    r.add_argument("target", metavar="FILE.py:NAME", help="an @sd.dataflow function (built as one region) or its schedule")
    r.add_argument("--board", default="u55c", help="u55c, u280 or vck190")
    r.set_defaults(run=cmd_report)

    x = sub.add_parser("explore", help="explore tiling, fusion and resources of a dataflow design")
    x.add_argument("target", metavar="FILE.py:NAME")
    x.add_argument("--board", default="u55c", help="u55c, u280 or vck190")
    x.add_argument("--budget", type=int, default=None, help="overall unroll budget (default: fill the board)")
    x.set_defaults(run=cmd_explore)

    llm = sub.add_parser("llm", help="LLM accelerators from the library").add_subparsers(dest="llm_command", required=True)
    lb = llm.add_parser("build", help="write a whole LLM accelerator project (layer kernels, host, link config)")
    lb.add_argument("family", choices=["gpt2", "llama", "qwen2", "gemma3"])
    lb.add_argument("--config", choices=["tiny", "full"], default="tiny",
                    help="tiny (random weights written) or the full-size model (no weights)")
    lb.add_argument("--quant", choices=["fp32", "w8a8", "w4a8"], default="fp32")
    lb.add_argument("--max-len", type=int, default=64, help="KV cache positions")
    lb.add_argument("--prefill-len", type=int, default=16, help="tokens the prefill kernel takes at once")
    lb.add_argument("-o", "--output", required=True, metavar="DIR")
    lb.add_argument("--overwrite", action="store_true")
    lb.set_defaults(run=cmd_llm_build)
    lg = llm.add_parser("generate", help="greedy generation with SmolLM2-135M on the accelerator")
    lg.add_argument("model", choices=["smollm2"])
    lg.add_argument("prompt")
    lg.add_argument("--max-new-tokens", type=int, default=8)
    lg.add_argument("--backend", choices=["sim", "csim"], default="sim")
    lg.set_defaults(run=cmd_llm_generate)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except StreamDSLError as err:
        print(str(err), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
