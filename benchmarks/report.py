"""The side-by-side table: rows of (double, real) samples, medians, min..max, ratio and target; and its
place in docs/benchmarks.md (between the ``<!-- benchmark:begin -->`` / ``<!-- benchmark:end -->``
markers, the rest of the file is left as written).
"""

from __future__ import annotations

import os
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

BEGIN, END = "<!-- benchmark:begin -->", "<!-- benchmark:end -->"


@dataclass
class Row:
    """One line of the table. ``double``/``real`` are samples in ``unit``; ``higher_is_better`` picks
    the ratio's direction (always reported as "double over real, higher is better"); ``target`` is the
    minimum ratio (``None``: no real server to compare with); ``limit`` an upper bound on the double's
    median instead (e.g. 1 ms for a reset). ``paired``: the samples were taken in pairs (``double[i]``
    beside ``real[i]``, under the same conditions, e.g. the same CRL size), and the ratio is the
    median of the pairs' ratios instead of the ratio of the medians, so that a trend across the
    rounds that both sides share cancels out."""

    label: str
    mode: str
    unit: str
    double: list[float]
    real: list[float] = field(default_factory=list)
    higher_is_better: bool = True
    target: float | None = 1.0
    limit: float | None = None
    paired: bool = False

    @property
    def ratio(self) -> float | None:
        if not self.real or not self.double:
            return None
        if self.paired:
            pairs = [(d / r if self.higher_is_better else r / d) for d, r in zip(self.double, self.real, strict=True) if d and r]
            return statistics.median(pairs) if pairs else None
        d, r = statistics.median(self.double), statistics.median(self.real)
        if self.higher_is_better:
            return d / r if r else None
        return r / d if d else None

    @property
    def met(self) -> str:
        if self.limit is not None:
            return "yes" if statistics.median(self.double) <= self.limit else "**no**"
        if self.target is None:
            return ""
        ratio = self.ratio
        if ratio is None:
            return "?"
        return "yes" if ratio >= self.target else "**no**"


def _num(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _cell(samples: list[float]) -> str:
    if not samples:
        return "-"
    med = statistics.median(samples)
    if len(samples) == 1:
        return _num(med)
    return f"**{_num(med)}** ({_num(min(samples))}..{_num(max(samples))})"


def table(rows: list[Row]) -> str:
    """The Markdown table."""
    lines = ["| operation | mode | unit | double: median (min..max) | real bao: median (min..max) | ratio | target | met |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        ratio = row.ratio
        ratio_text = f"{ratio:.2f}" if ratio is not None else "-"
        target = f">= {row.target:.3g}" if row.target is not None else "-"
        if row.limit is not None:
            target = f"<= {row.limit:g} {row.unit}"
        lines.append(f"| {row.label} | {row.mode} | {row.unit} | {_cell(row.double)} | {_cell(row.real)} | "
                     f"{ratio_text} | {target} | {row.met} |")
    return "\n".join(lines)


def measured(make_rows: Callable[[], list[Row]], note: str = "") -> list[Row]:
    """Run ``make_rows()`` and print its table after a line with the minutes it took, the load average
    (1 min) before and after, the CPU count and ``note``; returns the rows."""
    load_before, began = os.getloadavg(), time.time()
    result = make_rows()
    load_after = os.getloadavg()
    print(f"{(time.time() - began) / 60:.1f} min; load average (1 min) before / after: {load_before[0]:.2f} / "
          f"{load_after[0]:.2f}; {os.cpu_count()} CPUs{'; ' + note if note else ''}\n")
    print(table(result))
    return result


def write_docs(path: str, block: str) -> None:
    """Replace the generated block of ``path`` (created with a heading if missing)."""
    text = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    generated = f"{BEGIN}\n{block.rstrip()}\n{END}"
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: generated, text, flags=re.S)
    else:
        text = (text.rstrip() + "\n\n" if text else "# Benchmarks\n\n") + generated + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
