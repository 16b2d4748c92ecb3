"""A page as a person sees it: Debian's Chromium, headless, renders it (its scripts run,
up to a virtual-time budget) and takes a screenshot; the tests then look at the pixels."""
import shutil
import subprocess
from pathlib import Path

from PIL import Image

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--virtual-time-budget=8000"]


# A page whose scripts fetch its data from a server (SQUAD's charts) can be rendered before
# the answer came on a loaded host (seen once in CI): `until` says what the page must show,
# and it is rendered again, up to TRIES times, as a person reloads it. A static page's
# tests pass no `until`: rendered once.
TRIES = 3


def _rendered(render, until):
    """render() once, or again up to TRIES times while until(what it gave) is false."""
    for _ in range(TRIES if until else 1):
        got = render()
        if until is None or until(got):
            break
    return got


def screenshot(url: str, path: Path, size=(1200, 1400), until=None) -> Image.Image:
    assert CHROMIUM, "no chromium: scripts/setup-host.sh installs Debian's"

    def render():
        r = subprocess.run([CHROMIUM, *FLAGS, f"--window-size={size[0]},{size[1]}", f"--screenshot={path}", url],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and path.exists(), r.stderr[-2000:]
        return Image.open(path).convert("RGB")
    return _rendered(render, until)


def dom(url: str, until=None) -> str:
    """The page's DOM after its scripts ran (until: see TRIES)."""
    def render():
        r = subprocess.run([CHROMIUM, *FLAGS, "--dump-dom", url], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout
    return _rendered(render, until)


def pixels_near(img: Image.Image, rgb: tuple, tolerance: int = 12, box=None) -> int:
    """How many pixels (in box: left, top, right, bottom) are within tolerance of the colour."""
    area = img.crop(box) if box else img
    return sum(n for n, px in area.getcolors(area.width * area.height)
               if all(abs(a - b) <= tolerance for a, b in zip(px, rgb)))
