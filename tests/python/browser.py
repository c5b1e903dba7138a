"""Report pages in headless Chromium (Debian's `chromium`, which
`scripts/setup.sh --tests` installs): the browser's own layout, read by a
script run in a copy of the page, says whether any table cell, table box or
figure overflows its container; screenshots of the whole page are kept as
CI artefacts under build/screenshots/."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from conftest import REPO

SHOTS = REPO / "build" / "screenshots"
WIDTHS = (1400, 800)

# Runs once the page (and its embedded PNGs) has loaded; writes what it found
# into <pre id="layout-check"> for --dump-dom to carry out.
CHECK = """<script>
window.addEventListener("load", () => {
  const problems = [], root = document.documentElement, px = v => Math.round(v);
  const name = el => (el.textContent || el.getAttribute("alt") || "").trim().replace(/\\s+/g, " ").slice(0, 60);
  if (root.scrollWidth > root.clientWidth + 1)
    problems.push(`the page scrolls sideways: ${root.scrollWidth} px in a ${root.clientWidth} px window`);
  const boxes = [...document.querySelectorAll("div.table")];
  let scrolling = 0;
  for (const box of boxes) {
    const r = box.getBoundingClientRect(), outer = box.parentElement.getBoundingClientRect();
    const title = name(box.previousElementSibling || box);
    if (r.left < outer.left - 1 || r.right > outer.right + 1)
      problems.push(`table box "${title}" (${px(r.left)}-${px(r.right)}) leaves its section (${px(outer.left)}-${px(outer.right)})`);
    if (box.scrollWidth > box.clientWidth + 1) {
      if (getComputedStyle(box).overflowX !== "auto") problems.push(`table "${title}" is wider than its box, which does not scroll`);
      scrolling += 1;
      box.scrollLeft = box.scrollWidth;  // to its right end: the id column must stay where it was
      for (const row of box.querySelectorAll("tr")) {
        const first = row.cells[0].getBoundingClientRect();
        if (Math.abs(first.left - box.getBoundingClientRect().left) > 1) {
          problems.push(`table "${title}": its first column scrolls away (at ${px(first.left)}, box at ${px(r.left)})`);
          break;
        }
      }
      box.scrollLeft = 0;
    }
    for (const cell of box.querySelectorAll("td, th"))
      if (cell.scrollWidth > cell.clientWidth + 1 || cell.scrollHeight > cell.clientHeight + 1)
        problems.push(`table "${title}": cell "${name(cell)}" overflows it (${cell.scrollWidth} > ${cell.clientWidth} px)`);
    const next = box.nextElementSibling;
    if (next && next.getBoundingClientRect().top < r.bottom - 1)
      problems.push(`table "${title}": the text below starts under its box`);
  }
  const figures = [...document.querySelectorAll("figure")];
  for (const fig of figures) {
    const img = fig.querySelector("img"), f = fig.getBoundingClientRect(), i = img.getBoundingClientRect();
    const outer = fig.parentElement.getBoundingClientRect();
    if (!img.complete || img.naturalWidth === 0) problems.push(`figure "${name(img)}": image not shown`);
    if (i.left < f.left - 1 || i.right > f.right + 1) problems.push(`figure "${name(img)}": image wider than its figure`);
    if (f.left < outer.left - 1 || f.right > outer.right + 1) problems.push(`figure "${name(img)}" leaves its section`);
  }
  const out = document.createElement("pre");
  out.id = "layout-check";
  out.textContent = JSON.stringify({problems, tables: boxes.length, scrolling, figures: figures.length,
                                    height: root.scrollHeight, width: root.clientWidth});
  document.body.appendChild(out);
});
</script>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium is not installed: run 'bash scripts/setup.sh --tests'"
    return found


def _run(args: list[str], work: Path) -> str:
    # As root Chromium needs --no-sandbox; its profile goes to a folder of the test's own.
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--disable-dev-shm-usage", f"--user-data-dir={work / 'profile'}", *args]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                         env=dict(os.environ, HOME=str(work)))
    assert out.returncode == 0, (argv, out.stderr[-2000:])
    return out.stdout


def layout(page: Path, width: int, work: Path) -> dict:
    """What CHECK finds in `page` shown `width` px wide (a copy of the page gets the script)."""
    copy = work / f"{page.parent.name}-{page.stem}-{width}.check.html"
    copy.write_text(page.read_text().replace("</body>", CHECK + "</body>", 1))
    dom = _run([f"--window-size={width},1000", "--virtual-time-budget=10000", "--dump-dom", copy.as_uri()], work)
    found = re.search(r'<pre id="layout-check">(.*?)</pre>', dom, re.S)
    assert found, f"the check script did not run: {dom[-500:]}"
    return json.loads(html.unescape(found.group(1)))


def screenshot(page: Path, width: int, height: int, name: str, work: Path) -> Path:
    """The whole page at `width` px (a window as tall as the page), as build/screenshots/NAME.png."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    temp = work / f"{name}.png"
    _run([f"--window-size={width},{min(height, 16000)}", "--virtual-time-budget=10000", f"--screenshot={temp}",
          page.as_uri()], work)
    assert temp.stat().st_size > 10000
    final = SHOTS / f"{name}.png"
    shutil.move(temp, final)  # a rename where it can: the screenshot is there whole or not at all
    return final


def check_page(page: Path, name: str, work: Path) -> list[dict]:
    """At each width: nothing overflows, and a screenshot is kept; the layouts found."""
    found = []
    for width in WIDTHS:
        result = layout(page, width, work)
        assert result["problems"] == [], (name, width, result["problems"])
        screenshot(page, width, result["height"], f"{name}-{width}", work)
        found.append(result)
    return found
