"""The screenshot test's comparison (tests/support/screenshots.py): its tolerance lets antialiasing
through and stops a changed character; a mismatch writes a diff image; the update writes only the
baselines that differ beyond the tolerance."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

from tests.support import screenshots as pixels

SIZE = (1280, 800)


def page(text: str = "svc_sdk_...WDeX", size: tuple[int, int] = SIZE) -> Image.Image:
    picture = Image.new("RGB", size, "white")
    ImageDraw.Draw(picture).text((40, 40), text, fill=(20, 20, 20), font=ImageFont.load_default(size=13))
    return picture


def png(picture: Image.Image) -> bytes:
    out = io.BytesIO()
    picture.save(out, format="PNG")
    return out.getvalue()


def test_the_same_picture_matches():
    verdict = pixels.compare(page(), page())
    assert verdict.matches and verdict.differing == 0


def test_faint_or_few_differences_match_as_antialiasing_does():
    faint = page()
    faint.putpixel((45, 45), tuple(v + pixels.THRESHOLD for v in faint.getpixel((45, 45))[:3]))
    assert pixels.compare(page(), faint).matches
    few = page()
    for x in range(8):   # 8 pixels of 1,024,000: within 0.001%
        few.putpixel((300 + x, 300), (255, 0, 0))
    verdict = pixels.compare(page(), few)
    assert verdict.matches and verdict.differing == 8


def test_one_changed_character_does_not_match():
    verdict = pixels.compare(page("svc_sdk_...WDeX"), page("svc_sdk_...WDeY"))
    assert not verdict.matches and verdict.differing > pixels.MAX_SHARE * SIZE[0] * SIZE[1]
    assert "pixels differ" in verdict.detail


def test_another_size_does_not_match():
    verdict = pixels.compare(page(), page(size=(1280, 804)))
    assert not verdict.matches and "1280x800 -> 1280x804" in verdict.detail


def test_a_mismatch_writes_the_new_picture_and_a_diff_of_three_panels(tmp_path):
    stored = tmp_path / "screenshots" / "api-keys-1280.png"
    pixels.save_png(page(), stored)
    kept = stored.read_bytes()
    wrong = pixels.check(png(page("svc_sdk_...0000")), stored, tmp_path / "diffs", update=False)
    assert wrong is not None and "api-keys-1280.diff.png" in wrong
    assert stored.read_bytes() == kept
    assert pixels.rgb(tmp_path / "diffs" / "api-keys-1280.png").size == SIZE
    diff = pixels.rgb(tmp_path / "diffs" / "api-keys-1280.diff.png")
    assert diff.size == (3 * SIZE[0] + 2 * 16, SIZE[1])
    assert (220, 0, 0) in {colour for _, colour in diff.getcolors(1 << 16)}   # the difference in red


def test_a_new_page_without_a_baseline_fails_until_updated(tmp_path):
    stored = tmp_path / "screenshots" / "usage-390.png"
    assert "does not exist" in pixels.check(png(page()), stored, tmp_path / "diffs", update=False)
    assert not stored.exists()
    assert pixels.check(png(page()), stored, tmp_path / "diffs", update=True) is None
    assert pixels.compare(pixels.rgb(stored), page()).matches


def test_the_update_rewrites_only_what_changed_beyond_the_tolerance(tmp_path):
    stored = tmp_path / "home-1280.png"
    pixels.save_png(page(), stored)
    before = stored.read_bytes()
    within = page()
    within.putpixel((500, 500), (255, 0, 0))
    assert pixels.check(png(within), stored, tmp_path / "diffs", update=True) is None
    assert stored.read_bytes() == before                 # unchanged beyond the tolerance: byte for byte
    assert pixels.check(png(page("another text")), stored, tmp_path / "diffs", update=True) is None
    assert stored.read_bytes() != before
    assert pixels.compare(pixels.rgb(stored), page("another text")).matches
    assert not (tmp_path / "diffs").exists()             # an update writes no diff
