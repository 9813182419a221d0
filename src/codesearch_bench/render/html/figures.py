"""The comparison's figures inline: render/plots's PNGs as data URIs, so the page is one
file that needs nothing else at view time.

Inline, each PNG is redrawn with a palette of 64 colours: the figures are flat colours,
text and thin lines, so they read the same at about a quarter of the bytes (a default
run's 64 figures went from 5.8 to 1.6 MB of base64), which keeps a page of many corpora
small enough to open. Pillow comes with matplotlib; without it the figures go in as
drawn.

matplotlib is the optional `plots` extra; without it the page is whole but for
the figures, and says which extra to install.
"""

from __future__ import annotations

import base64
import io
import tempfile
from pathlib import Path

from ...errors import UsageError
from ...results.schema import ResultFile

KINDS = (("scores", "scores with 95% intervals"), ("timing", "timing and memory"),
         ("pareto", "quality vs latency (Pareto)"), ("budget", "recall at a token budget"))


def figures(result: ResultFile) -> tuple[dict[str, list[tuple[str, str]]], str | None]:
    """Per corpus, (caption, data URI) for each figure; or no figures and why not."""
    try:
        from ..plots import render_plots
        from ..plots.figure import INSTALL_HINT, corpora_of
    except ImportError as exc:  # pragma: no cover - render/plots itself imports lazily
        return {}, f"figures are not drawn: {exc}"
    with tempfile.TemporaryDirectory(prefix="bench-html-") as tmp:
        try:
            paths = render_plots(result, Path(tmp))
        except UsageError as exc:
            return {}, (f"figures are not drawn: {exc.message}; install the `plots` extra: "
                        f"{exc.hint or INSTALL_HINT}")
        # render_plots writes KINDS in order for each corpus in corpora_of's order.
        by_corpus: dict[str, list[tuple[str, str]]] = {}
        names = corpora_of(result)
        per = len(KINDS)
        for i, corpus in enumerate(names):
            chunk = paths[i * per:(i + 1) * per]
            if [p.stem.rsplit("-", 1)[-1] for p in chunk] != [k for k, _ in KINDS]:
                return {}, "figures are not drawn: render/plots wrote an unexpected set"
            by_corpus[corpus] = [
                (caption, "data:image/png;base64,"
                 + base64.b64encode(small_png(p.read_bytes())).decode("ascii"))
                for p, (_, caption) in zip(chunk, KINDS, strict=True)]
    return by_corpus, None


COLOURS = 64


def small_png(data: bytes) -> bytes:
    """The PNG with a palette of COLOURS colours (no dithering: flat fills stay flat), or
    as it was when Pillow is missing or the palette one would not be smaller."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - matplotlib depends on Pillow
        return data
    with Image.open(io.BytesIO(data)) as image:
        # The octree: five times faster than median cut here, and smaller; a pixel's
        # colour moves by one step in 255 on average.
        reduced = image.convert("RGB").quantize(colors=COLOURS,
                                                method=Image.Quantize.FASTOCTREE,
                                                dither=Image.Dither.NONE)
    out = io.BytesIO()
    reduced.save(out, format="PNG", optimize=True)
    return out.getvalue() if out.tell() < len(data) else data
