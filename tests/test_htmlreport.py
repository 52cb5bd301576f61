"""The HTML report: its content, its escaping, its errors, and the page as headless Chromium shows it.

The browser test drives Chromium through the DevTools protocol (``websocket-client``): console
messages, uncaught exceptions and failed loads are collected while the page loads, the DOM is
read back, and a screenshot is kept in ``tests/artifacts/report.png`` (and in pytest's tmp).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

import streamdsl as sd
from streamdsl import f32
from streamdsl.htmlreport import ReportError, perf_html, report_html, write_report
from streamdsl.perf.model import model_design

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--mute-audio"]
WINDOW = (1400, 2000)


def _load_example(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def ffn():
    """examples/ffn_dataflow.py: linear -> GELU -> linear streamed row by row, one region, FIFOs sized."""
    return _load_example("ffn_dataflow")


@pytest.fixture(scope="module")
def design(ffn):
    return ffn.design(fused=True)


@pytest.fixture(scope="module")
def page(design):
    return report_html(design)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(text: str) -> list[tuple[str, dict]]:
    p = _Tags()
    p.feed(text)
    return p.tags


def visible(text: str) -> str:
    """The page's text as a reader sees it (tags dropped, entities decoded): code is highlighted in spans."""
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"(?s)<(style|svg)\b.*?</\1>", "", text)))


# ------------------------------------------------------------------ content
def test_report_has_the_numbers_of_the_model(design, page):
    perf = model_design(design, "u55c")
    assert f"{perf.cycles:,}".replace(",", "\u2009") in page  # end-to-end latency, digits grouped
    us = perf.latency_s * 1e6
    assert (f"{us:.2f} \u00b5s" if us < 1e3 else f"{us / 1e3:.2f} ms") in page
    for t in design.graph.tasks:
        assert t in page
    # the linears' accumulation over k flattened with the output loop inside it: II 1 (a sum recurs only every
    # n_out iterations, past the fadd latency), from cost.estimate
    assert "k: 1" in page
    for s in range(3):
        assert f"SLR{s}" in page  # resources per SLR of the U55C
    assert "BRAM18K" in page and "assumptions" in page.lower()


def test_report_has_pictures_code_ir_and_trace(design, page):
    t = tags(page)
    assert any(tag == "svg" for tag, _ in t), "the dataflow graph is inline SVG"
    imgs = [a["src"] for tag, a in t if tag == "img"]
    assert len(imgs) == 2 and all(src.startswith("data:image/png;base64,") for src in imgs)  # timeline, roofline
    assert not any(tag == "script" for tag, _ in t)
    text = visible(page)
    assert "ffn.cpp" in text and "#pragma HLS dataflow" in text
    assert "II in amber: above 1, the pipelined loop starts an iteration only every II cycles" in text
    assert "g.size_fifos(mode='normal')" in text and 's.pipeline(s.loop("o", 1), ii=1)' in text  # both traces
    assert "kernel gelu_16x64(" in text  # a task's IR
    ids = {a["id"] for _tag, a in t if "id" in a}
    links = [a["href"][1:] for tag, a in t if tag == "a" and a.get("href", "").startswith("#")]
    assert links and set(links) <= ids  # every table-of-contents entry lands


def test_code_from_the_design_is_escaped(page):
    assert "#include &lt;" in page and "#include <" not in page
    assert re.search(r"\w &lt; ", page) and re.search(r"\w < \d", visible(page))  # loop bounds in the C++
    assert not re.search(r"\w < ", page)
    assert "itensor&lt;1x32xf32" in page  # layouts in the FIFO table


def test_a_design_name_that_looks_like_html_is_escaped(tmp_path):
    @sd.kernel
    def scale(X: f32[4, 4]) -> f32[4, 4]:
        Y: f32[4, 4] = 0.0
        for i, j in sd.grid(4, 4):
            Y[i, j] = X[i, j] * 2.0
        return Y

    p = write_report(scale, tmp_path, title="<script>alert(1)</script> & co", quiet=True)
    text = p.read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in text


def test_kernel_and_schedule_reports(tmp_path):
    @sd.kernel
    def gemm(A: f32[16, 16], B: f32[16, 16]) -> f32[16, 16]:
        C: f32[16, 16] = 0.0
        for i, j in sd.grid(16, 16):
            for k in range(16):
                C[i, j] += A[i, k] * B[k, j]
        return C

    s = sd.schedule(gemm)
    s.pipeline(s.loop("j"))
    text = visible(write_report(s, tmp_path, quiet=True).read_text())
    assert "kernel gemm(" in text and 's.pipeline(s.loop("j"), ii=1)' in text
    assert "gemm.cpp" in text and "#pragma HLS pipeline II=1" in text
    page = report_html(gemm)
    assert "kernel gemm(" in visible(page) and "<svg" not in page


def test_a_bare_dataflow_is_reported_as_one_sized_region(ffn):
    text = report_html(ffn.ffn)
    assert re.search(r"tasks / regions</div><div class=\"value\">3 / 1<", text)


def test_a_design_perf_is_reported_at_its_own_board(design):
    perf = model_design(design, "u280")
    text = report_html(perf)
    assert "on u280" in text and f"{perf.cycles:,}".replace(",", "\u2009") in text


def test_an_exploration_reports_its_best_design_and_the_table(design):
    ex = sd.explore(design, "u55c")
    page = report_html(ex)
    text = visible(page)
    assert f"the best of {len(ex.tried)} designs" in text and 'href="#explored"' in page
    for t in ex.tried:
        assert t.label in text
    assert f"{ex.best.cycles:,}".replace(",", "\u2009") in text
    frag = perf_html(ex)
    assert "exploration of" in frag and "<table>" in frag and "<svg" not in frag


@pytest.fixture(scope="module")
def tiny_llm():
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.perf import llm_perf

    return llm_perf(tiny("llama"), prompt=4, gen=4)


def test_an_llm_result_reports_ttft_tokens_rooflines_gaps_and_assumptions(tiny_llm):
    lp = tiny_llm
    page = report_html(lp)
    text = visible(page)
    assert f"{lp.ttft_s * 1e3:.2f} ms" in text and "tokens/s" in text
    assert "HBM roofline" in text and "fp32 compute roofline" in text
    assert all(a in text for a in lp.assumptions()) and all(g in text for g in lp.gaps())
    assert "Decode layer design" in text and f"{lp.layers[0].decode.cycles:,}".replace(",", "\u2009") in text
    assert sum(t == "img" for t, _ in tags(page)) == 2  # timeline of the decode layer, roofline of the model
    frag = perf_html(lp)
    assert "TTFT" in frag and "decode layer design" in frag and "<script" not in frag


def test_llm_numbers_beside_another_layer_design_say_so(design, tiny_llm):
    text = visible(report_html(design, llm=tiny_llm))
    assert "TTFT" in text and "the design reported below is ffn as given" in text
    with pytest.raises(ReportError, match="llm= takes an llm_perf"):
        report_html(design, llm=design)


def test_a_deadlocking_design_is_reported_with_its_deadlock(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("df_kernels", ROOT / "tests" / "dfg" / "df_kernels.py")
    dk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dk)
    g = sd.schedule(dk.bypass)  # relu -> relu_2 (needs all of a) -> add, and a bypass a -> add
    g.fuse(*g.tasks())
    for e in "xabc":
        g.stream(g.edge(e), tile=(2, 8))
    g.stream(g.edge("a"), tile=(8, 8), side=g.task("relu_2"))
    g.size_fifos()
    depth, _ = g.depth("a:add")
    g.fifo(g.edge("a"), depth=depth - 1, consumer=g.task("add"))
    text = visible(write_report(g, tmp_path, quiet=True).read_text())
    assert "deadlock" in text and "'a:add' (full at depth" in text and "g.size_fifos() sizes them" in text


def test_a_kernel_ir_is_reported_like_its_kernel():
    k = sd.parse_ir("kernel twice(X: f32[4]) -> (f32[4]) {\n  alloc Y: f32[4] = 0.0:f32\n"
                    "  for i in range(0:i32, 4:i32, 1) {\n    Y[i] = (X[i] * 2.0:f32)\n  }\n  return Y\n}\n")
    text = visible(report_html(k))
    assert "kernel twice(" in text and "twice.cpp" in text


def test_an_existing_folder_keeps_its_other_files(design, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "report.html").write_text("old")
    p = write_report(design, tmp_path, quiet=True)
    assert p == tmp_path / "report.html" and p.read_text().startswith("<!DOCTYPE html>")
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["notes.txt", "report.html"]


def test_write_report_returns_where_it_wrote_and_prints_nothing(design, tmp_path, capsys):
    """A library call does not print: the path is the result (the CLI says what it wrote)."""
    p = write_report(design, tmp_path / "new" / "dir")
    assert p == tmp_path / "new" / "dir" / "report.html" and p.is_file()
    assert capsys.readouterr().out == ""


def test_write_reports_old_keyword_still_works_with_a_warning(design, tmp_path):
    with pytest.warns(DeprecationWarning, match=r"write_report\(target=...\) is now write_report\(design=...\)"):
        p = write_report(target=design, out_dir=tmp_path)
    assert p.is_file()


@pytest.mark.parametrize("call, message, hint", [
    (lambda d, t: write_report(42, t), "cannot report a int", "DataflowSchedule"),
    (lambda d, t: write_report(d, t / "f.txt"), "is a file, not a folder", "report.html"),
    (lambda d, t: write_report(d, t, board="zz9"), "zz9", "u55c"),
    (lambda d, t: write_report(d, t, title=3), "title must be a string", "title="),
    (lambda d, t: write_report(d, None), "out_dir must be a folder path", "write_report"),
])
def test_bad_arguments_are_located_errors(design, tmp_path, call, message, hint):
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ReportError) as e:
        call(design, tmp_path)
    assert message in e.value.message and hint in (e.value.hint or "")
    assert e.value.loc is not None and e.value.loc.file == __file__
    assert sorted(x.name for x in tmp_path.iterdir()) == ["f.txt"]  # nothing written


# ------------------------------------------------------------------ the browser
def _chromium() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if exe is None:
        pytest.fail("Chromium is not installed (the HTML report test opens the page headless): "
                    "run `sh scripts/setup.sh test`")
    return exe


class DevTools:
    """A minimal DevTools-protocol session with one page of a headless Chromium."""

    def __init__(self, exe: str, profile: Path):
        import websocket  # websocket-client, from the test extra

        self.proc = subprocess.Popen([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                      f"--window-size={WINDOW[0]},{WINDOW[1]}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.poll() is not None else ""
                self.close()
                pytest.fail(f"Chromium did not open its DevTools port: {err}")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, **params) -> dict:
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise AssertionError(f"DevTools {method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_for(self, event: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(e["method"] == event for e in self.events):
            assert time.monotonic() < deadline, f"no {event} within {timeout} s"
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)

    def evaluate(self, js: str):
        r = self.send("Runtime.evaluate", expression=js, returnByValue=True)
        assert "exceptionDetails" not in r, r
        return r["result"]["value"]

    def problems(self) -> list[str]:
        """Console messages, uncaught exceptions and failed loads seen so far."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                out.append("exception: " + p["exceptionDetails"].get("text", "") + " " +
                           str(p["exceptionDetails"].get("exception", {}).get("description", "")))
            elif e["method"] == "Runtime.consoleAPICalled":
                out.append(f"console.{p['type']}: " + " ".join(str(a.get("value", a.get("description")))
                                                               for a in p.get("args", [])))
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                out.append(f"{p['entry']['level']} ({p['entry']['source']}): {p['entry']['text']}")
        return out

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                try:
                    self.ws.send(json.dumps({"id": 10**6, "method": "Browser.close"}))
                except Exception:  # noqa: BLE001 - the browser may be gone already
                    pass
                self.ws.close()
        finally:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def open_in_chromium(html_path: Path, shot: Path, clip: str | None = None) -> dict:
    """Load ``html_path``; returns the DOM facts, the problems and the page's outer HTML; saves a screenshot
    of the window, or of the whole element ``clip`` (a CSS selector) however far down the page it reaches."""
    import base64

    exe = _chromium()
    with tempfile.TemporaryDirectory(prefix="streamdsl-chromium-") as profile:
        dt = DevTools(exe, Path(profile))
        try:
            dt.send("Runtime.enable")
            dt.send("Log.enable")
            dt.send("Page.enable")
            dt.send("Emulation.setDeviceMetricsOverride", width=WINDOW[0], height=WINDOW[1], deviceScaleFactor=1,
                    mobile=False)
            dt.send("Page.navigate", url=html_path.resolve().as_uri())
            dt.wait_for("Page.loadEventFired")
            facts = dt.evaluate("""JSON.stringify({
                title: document.title,
                graphSvg: document.querySelectorAll('#fig-graph svg').length,
                svgWidth: (document.querySelector('#fig-graph svg') || {getBoundingClientRect: () => ({width: 0})})
                          .getBoundingClientRect().width,
                imgs: Array.from(document.images).map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0,
                                                            width: i.getBoundingClientRect().width})),
                scripts: document.scripts.length,
                overflowX: document.documentElement.scrollWidth > window.innerWidth,
                pageWidth: document.documentElement.scrollWidth,
                graphBoxWidth: (document.querySelector('#fig-graph') || {clientWidth: 0}).clientWidth,
                graphScrollWidth: (document.querySelector('#fig-graph') || {scrollWidth: 0}).scrollWidth,
                height: document.documentElement.scrollHeight})""")
            dom = dt.evaluate("document.documentElement.outerHTML")
            shot_args = {}
            if clip is not None:
                box = json.loads(dt.evaluate(f"""JSON.stringify((() => {{
                    const r = document.querySelector({json.dumps(clip)}).getBoundingClientRect();
                    return {{x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height}};
                }})())"""))
                shot_args = dict(clip={**box, "scale": 1}, captureBeyondViewport=True)
            png = dt.send("Page.captureScreenshot", format="png", **shot_args)["data"]
            shot.parent.mkdir(parents=True, exist_ok=True)
            shot.write_bytes(base64.b64decode(png))
            return {"facts": json.loads(facts), "problems": dt.problems(), "dom": dom}
        finally:
            dt.close()


def test_report_opens_in_headless_chromium_without_errors(design, tmp_path):
    path = write_report(design, tmp_path / "report", quiet=True)
    shot = ARTIFACTS / "report.png"
    got = open_in_chromium(path, shot)
    shutil.copy(shot, tmp_path / "report.png")
    assert got["problems"] == [], got["problems"]
    f = got["facts"]
    assert f["title"].startswith("dataflow ffn on u55c")
    assert f["graphSvg"] == 1 and f["svgWidth"] > 200
    assert [i["alt"] for i in f["imgs"]] == ["token-simulation timeline", "roofline"]
    assert all(i["ok"] and i["width"] > 200 for i in f["imgs"]), f["imgs"]  # the data: PNGs decoded and shown
    assert f["scripts"] == 0 and not f["overflowX"]
    dom = tags(got["dom"])
    assert any(t == "svg" for t, _ in dom) and sum(t == "img" for t, _ in dom) == 2
    assert shot.stat().st_size > 20_000


def test_an_llm_layers_graph_is_readable_at_a_screens_width(tmp_path):
    """The decode layer of a Llama (SmolLM2's graph: a dozen kernels, 16 DMAs) at 1,400 px: the whole graph is
    about a screen wide and drawn at least GRAPH_MIN_SCALE of its size (10 pt labels >= 10 px), and the page
    does not scroll sideways.  The screenshot of the whole graph is tests/artifacts/report_llm_graph.png."""
    from streamdsl.htmlreport import GRAPH_MIN_SCALE
    from streamdsl.library.llm.config import tiny
    from streamdsl.library.llm.models import llama

    g = llama(tiny("llama"), max_len=16).schedule(1)
    path = write_report(g, tmp_path / "report", quiet=True)
    m = re.search(r'<svg style="[^"]*"\s+width="([\d.]+)pt" height="([\d.]+)pt"\s+viewBox="([\d. -]+)"', path.read_text())
    assert m, "the graph is inline SVG with a viewBox"
    view = [float(v) for v in m.group(3).split()]
    natural = view[2] * 4 / 3  # pt -> CSS px
    assert natural <= WINDOW[0], f"the graph is {natural:.0f} px wide"  # was 9,274 px, ranked left to right
    shot = ARTIFACTS / "report_llm_graph.png"
    got = open_in_chromium(path, shot, clip="#fig-graph")
    shutil.copy(shot, tmp_path / "report_llm_graph.png")
    assert got["problems"] == [], got["problems"]
    f = got["facts"]
    assert f["pageWidth"] <= WINDOW[0] and not f["overflowX"]
    assert GRAPH_MIN_SCALE * natural <= f["svgWidth"] <= f["graphBoxWidth"], f  # legible, and all of it in view
    assert f["graphScrollWidth"] <= f["graphBoxWidth"], f
    png = shot.read_bytes()
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width >= f["svgWidth"] and height >= f["svgWidth"] * view[3] / view[2]  # the whole graph is in the shot


def test_without_chromium_the_browser_test_fails_and_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(os.path, "exists", lambda p: False)
    with pytest.raises(pytest.fail.Exception, match="run `sh scripts/setup.sh test`"):
        _chromium()


if __name__ == "__main__":  # python tests/test_htmlreport.py OUT.html: a screenshot of any report, for a look
    src = Path(sys.argv[1])
    print(open_in_chromium(src, Path(sys.argv[2] if len(sys.argv) > 2 else "report.png"))["facts"])
