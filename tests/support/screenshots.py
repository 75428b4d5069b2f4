"""A screenshot against its reviewed baseline, with a tolerance: a pixel differs when one of its
colour channels moved by more than THRESHOLD (of 255), and a picture matches when at most MAX_SHARE
of its pixels differ (the antialiasing of text and curves, which may vary from one run to the
next). Pictures of different sizes never match. On a mismatch a diff image is written for a person
to look at: the new picture faded to grey with the differing pixels in red, beside the baseline and
the new picture themselves.

Pillow does the pixel work (it is kept well and installs from a wheel everywhere); Python
Playwright has no picture comparison of its own (toHaveScreenshot is the JavaScript test runner's).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops

THRESHOLD = 32        # of 255, on the channel that moved most
# 0.001% of the pixels: 10 of a 1280x800 picture. Chromium draws the same page to the same pixels here
# run after run (none differed in the runs that set this), and one changed character of a 13 px text
# moves some 40 pixels past THRESHOLD, so it fails even on a long page.
MAX_SHARE = 0.00001


@dataclass
class Verdict:
    matches: bool
    share: float          # of the pixels that differ (1.0 when the sizes differ)
    differing: int
    detail: str


def rgb(png: bytes | Path) -> Image.Image:
    opened = Image.open(io.BytesIO(png) if isinstance(png, bytes) else png)
    return opened.convert("RGB")


def differing_mask(expected: Image.Image, actual: Image.Image) -> Image.Image:
    """A one-bit picture: white where a channel moved by more than THRESHOLD."""
    red, green, blue = ImageChops.difference(expected, actual).split()
    most = ImageChops.lighter(ImageChops.lighter(red, green), blue)
    return most.point(lambda moved: 255 if moved > THRESHOLD else 0).convert("1")


def compare(expected: Image.Image, actual: Image.Image) -> Verdict:
    if expected.size != actual.size:
        return Verdict(False, 1.0, actual.width * actual.height,
                       f"the size changed: {expected.width}x{expected.height} -> {actual.width}x{actual.height}")
    mask = differing_mask(expected, actual)
    differing = mask.histogram()[-1]
    share = differing / (actual.width * actual.height)
    return Verdict(share <= MAX_SHARE, share, differing,
                   f"{differing} pixels differ ({share:.4%}; at most {MAX_SHARE:.4%} may)")


def diff_image(expected: Image.Image, actual: Image.Image) -> Image.Image:
    """Baseline | diff | new, side by side on one canvas as tall as the taller: in the diff, the new
    picture faded, red where it differs (and where only one of the two has pixels at all)."""
    width, height = max(expected.width, actual.width), max(expected.height, actual.height)

    def padded(picture: Image.Image) -> Image.Image:
        canvas = Image.new("RGB", (width, height), (255, 0, 255))
        canvas.paste(picture, (0, 0))
        return canvas

    old, new = padded(expected), padded(actual)
    faded = Image.blend(new.convert("L").convert("RGB"), Image.new("RGB", (width, height), "white"), 0.7)
    mask = differing_mask(old, new)
    marked = Image.composite(Image.new("RGB", (width, height), (220, 0, 0)), faded, mask)
    gap = 16
    sheet = Image.new("RGB", (3 * width + 2 * gap, height), (128, 128, 128))
    for i, part in enumerate((old, marked, new)):
        sheet.paste(part, (i * (width + gap), 0))
    return sheet


def check(png: bytes, stored: Path, diffs: Path, *, update: bool) -> str | None:
    """None when the picture matches its baseline `stored`, or when `update` wrote it (only then: an
    unchanged page's file stays as it was, byte for byte); else what is wrong, with the new picture
    (and, against a baseline, the diff image) written under `diffs` for a person to look at."""
    actual = rgb(png)
    verdict = compare(rgb(stored), actual) if stored.exists() else None
    if verdict is not None and verdict.matches:
        return None
    if update:
        save_png(actual, stored)
        return None
    new = diffs / stored.name
    save_png(actual, new)
    if verdict is None:
        return f"{stored.name} does not exist (the page is new): the new picture is {new}"
    diff = diffs / f"{stored.stem}.diff.png"
    save_png(diff_image(rgb(stored), actual), diff)
    return f"{stored.name}: {verdict.detail}; look at {diff} (baseline | difference in red | new)"


def save_png(picture: Image.Image, path: Path) -> None:
    """As small as Pillow's lossless compression makes it (the baselines are committed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    picture.save(path, format="PNG", optimize=True)
