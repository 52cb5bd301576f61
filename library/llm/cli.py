"""The library's command-line subcommands (``streamdsl llm build``, ``streamdsl llm generate``) and its
project folders (``streamdsl csim DIR`` and ``streamdsl report DIR`` of a folder ``llm build`` wrote).

The core command line finds these through entry points (``streamdsl.commands`` and
``streamdsl.project_kinds`` in pyproject.toml), so the package below knows nothing of the library.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import streamdsl as sd
from streamdsl.cli import (
    FORMAT, PROJECT, CLIError, MismatchError, check_board, check_output, compare, inside, json_text,
    owned_sources, positive, project_files,
)
from streamdsl.progress import bar

FAMILIES = ("gpt2", "llama", "qwen2", "gemma3")
FULL_MODELS = {"gpt2": "gpt2-medium", "llama": "llama-3.2-1b", "qwen2": "qwen2.5-0.5b", "gemma3": "gemma-3-1b"}


def model_of(prj: dict, folder: Path | None):
    """The model a project folder records (family, config, quant, max_len), with its weights when ``folder``."""
    from .config import preset, tiny
    from .hls_build import load_weights
    from .models import model

    config = tiny(prj["family"]) if prj["config"] == "tiny" else preset(FULL_MODELS[prj["family"]])
    m = model(config, max_len=prj["max_len"], quant=prj["quant"])
    if folder is not None:
        m.load(load_weights(folder / "weights", config))
    return m


def random_layer_inputs(m, i: int, t: int, pos: int, rng) -> list:
    """Layer ``i``'s arguments for ``t`` random new tokens after ``pos`` cached ones (a random cache), built by
    the model's own :meth:`LLM.layer_inputs`, as prefill builds them."""
    c = m.config
    x = rng.standard_normal((t, c.hidden)).astype(np.float32)
    kc, vc = (rng.standard_normal((c.kv_heads, m.max_len, c.head_dim)).astype(np.float32) for _ in range(2))
    return m.layer_inputs(i, x, kc, vc, pos)


def layer_schedule(m, prj: dict, kind: str, board):
    """The decode layer schedule of ``kind`` a folder was built with (``schedule`` in streamdsl.json; folders
    written before it existed hold the default schedule)."""
    return m.decode_layer(kind, prj.get("schedule", "default"), board)


# ------------------------------------------------------------------------ project folders
class LLMProjects:
    """``streamdsl csim`` and ``streamdsl report`` of a folder ``streamdsl llm build`` wrote."""

    @staticmethod
    def csim(folder: Path, prj: dict, args) -> int:
        rebuild = f"rebuild it: streamdsl llm build {prj.get('family', 'FAMILY')} -o {folder}"
        if prj.get("config") != "tiny":
            raise CLIError(f"'{folder}' is a full-size {prj.get('family')} project, written without weights: its "
                           "layer kernels cannot be C-simulated from the folder (no weight files to feed them)",
                           hint=f"C-simulate a tiny build: streamdsl llm build {prj.get('family')} --config tiny "
                                "-o DIR; streamdsl csim DIR")
        try:
            variants = json.loads(inside(folder, "project.json", "its accelerator file", rebuild).read_text())["variants"]
            board = check_board(prj["board"])
        except (KeyError, TypeError, OSError, ValueError) as err:
            raise CLIError(f"'{folder / 'project.json'}' is missing or damaged ({type(err).__name__}: {err})",
                           hint=rebuild) from None
        m = model_of(prj, folder)
        c = m.config
        rng = np.random.default_rng(args.seed)
        worst = 0.0
        for v in bar(variants, desc="csim layers", unit="layer"):
            t, kind = int(v["t"]), v["kind"]
            layer = m.layer_kinds.index(kind)
            decode = layer_schedule(m, prj, kind, board)
            g = decode if t == 1 else m.schedule(t, kind, decode=decode)
            prj_ = g.build("hls", board=board)
            names = [a["name"] for a in v["args"]]
            mine = [p["name"] for p in prj_.ports] + [name for _, name, _ in prj_.scalars]
            if names != mine:
                raise CLIError(f"'{folder / v['folder']}' takes ({', '.join(names)}), this streamdsl's layer takes "
                               f"({', '.join(mine)})", hint=rebuild)
            sub = inside(folder, v["folder"], "the layer folder", rebuild)
            files = project_files(sub, owned_sources(sub), rebuild)
            pos = min(3, m.max_len - t)  # a few cached tokens, so attention reads the cache
            inputs = random_layer_inputs(m, layer, t, pos, rng)
            want = m.layer(t, kind).function(*inputs)
            prj_.files = files  # the folder's own C++, not a fresh build
            got = prj_.csim(*inputs)  # rows stored in place
            err, bad = compare(got, want, args.rtol, args.atol)
            if bad:
                raise MismatchError(f"{v['kernel']} in {sub}: the C-simulation differs from the reference simulator: "
                                    + "; ".join(bad), hint="this is a streamdsl bug; please report it with the folder")
            worst = max(worst, err)
            print(f"PASS {v['kernel']} (layer {layer}, {t} token(s) after {pos}): max |error| {err:.3g}")
        print(f"PASS {prj['family']} ({len(variants)} layer kernel(s) on {prj['board']}): C-simulation of {folder} "
              f"matches the reference simulator; max |error| {worst:.3g}")
        # one whole launch of the generate kernel: ids in, every layer, the head and argmax, ids out
        from .device import csim as csim_launch

        plan = json.loads((folder / "project.json").read_text())
        p = int(plan["prefill_len"])
        n_prompt = p if p > 1 else min(3, m.max_len)
        n_new = max(1, min(4, m.max_len - n_prompt + 1))
        ids = [int(i) for i in rng.integers(0, c.vocab, n_prompt)]
        got = csim_launch(folder, ids, n_new)
        want = m.generate(ids, n_new)
        if got != want:
            raise MismatchError(f"{plan['kernel']['name']} in {folder / 'generate'}: one C-simulated launch generates "
                                f"{got} for the prompt {ids}, the reference simulator {want}",
                                hint="this is a streamdsl bug; please report it with the folder")
        print(f"PASS {plan['kernel']['name']}: one C-simulated launch (prompt {ids}) generates {got}, as the "
              "reference simulator does")
        return 0

    @staticmethod
    def report_design(folder: Path, prj: dict):
        """(the design ``streamdsl report`` models, its title): the folder's decode layer."""
        m = model_of(prj, None)
        g = layer_schedule(m, prj, m.kinds()[0], check_board(prj.get("board", "u55c")))
        return g, f"{m.config.name or prj['family']} decode layer ({prj.get('schedule', 'default')} schedule)"


# ------------------------------------------------------------------------------ commands
def cmd_build(args) -> int:
    from .weights import random_weights

    out = Path(args.output)
    folder = check_output(out, args.force)
    board = check_board(args.board)
    prj = dict(format=FORMAT, kind="llm", family=args.family, config=args.config, quant=args.quant,
               max_len=args.max_len, prefill_len=None, board=board.name, schedule=args.schedule)
    m = model_of(prj, None)
    prj["max_len"] = m.max_len  # GPT-2's learned positions may cap it
    if args.config == "tiny":
        m.load(random_weights(m.config, seed=0))  # full-size projects are built without weights
    prefill_len = None if args.prefill_len is None else min(args.prefill_len, m.max_len)  # None: the build's choice
    accel = m.build("hls", output=out, prefill_len=prefill_len, board=board, overwrite=args.force,
                    schedule=args.schedule)
    prj.update(prefill_len=accel.prefill_len, model=m.config.name or args.family, version=sd.__version__)
    folder.write({PROJECT: json_text(prj)})
    print(f"wrote {accel}")
    print(accel.fit())  # both phases' kernels in one xclbin, against UG1393's per-SLR guideline
    if args.config == "tiny":
        print(f"C-simulate its layers with: streamdsl csim {out}")
    return 0


def cmd_generate(args) -> int:
    from .gguf_loader import load_smollm2
    from .models import llama

    config, weights, tokenizer = load_smollm2()
    ids = tokenizer(args.prompt).input_ids
    m = llama(config, max_len=len(ids) + args.max_new_tokens).load(weights)
    print(args.prompt + tokenizer.decode(m.generate(ids, args.max_new_tokens, mode=args.mode)))
    return 0


def add_commands(sub, command, common) -> None:
    """``streamdsl llm ...`` (the core command line calls this through its ``streamdsl.commands`` entry point)."""
    llm_p = sub.add_parser("llm", help="LLM accelerators from the library", description="LLM accelerators from the library",
                           parents=[common])
    llm = llm_p.add_subparsers(dest="llm_command", required=True, metavar="COMMAND")
    lb = command(llm, "build", "write a whole LLM accelerator project (layer kernels, host, link config, weights)",
                 cmd_build)
    lb.add_argument("family", choices=FAMILIES)
    lb.add_argument("--config", choices=["tiny", "full"], default="tiny",
                    help="tiny (random weights written; csim works) or the full-size model (no weights)")
    lb.add_argument("--quant", choices=["fp32", "w8a8", "w4a8"], default="fp32")
    lb.add_argument("--max-len", type=positive, default=64, help="KV cache positions")
    lb.add_argument("--prefill-len", type=positive, default=None,
                    help="tokens the prefill kernel takes at once (1: none, the prompt through the decode layers; "
                         "default: a 16-token one when the model says it is faster a token than the decode layers)")
    lb.add_argument("--board", default="u55c", help=f"{', '.join(sd.BOARDS)} (default u55c; the accelerator "
                                                     "needs HBM)")
    lb.add_argument("--schedule", choices=["explored", "default"], default="explored",
                    help="the decode layer sd.explore finds fastest, the design the report prices (default), or "
                         "the library's default schedule")
    lb.add_argument("-o", "--output", required=True, metavar="DIR")
    lb.add_argument("-f", "--force", "--overwrite", dest="force", action="store_true",
                    help="write into a folder that holds files streamdsl did not write")
    lg = command(llm, "generate", "greedy generation with SmolLM2-135M on the accelerator", cmd_generate)
    lg.add_argument("model", choices=["smollm2"])
    lg.add_argument("prompt")
    lg.add_argument("--max-new-tokens", type=positive, default=8)
    lg.add_argument("--mode", choices=["sim", "csim"], default="sim",
                    help="the reference simulator or g++ C-simulation of the emitted HLS (default sim)")
    lg.add_argument("--backend", dest="mode", choices=["sim", "csim"], help="deprecated: the old name of --mode")
