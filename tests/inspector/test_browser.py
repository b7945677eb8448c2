"""The inspector page in a real headless Chromium (Debian's chromium and chromium-driver,
driven by selenium): what a person sees, and that nothing recorded runs or loads."""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli import ROOT, harness_cli
from tests.inspector.conftest import INJECTION, Recorded
from tests.inspector.reasons import HOSTILE, Excluding

webdriver = pytest.importorskip("selenium.webdriver", reason="the dev extra installs selenium")
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="chromium and chromium-driver not installed (apt-get install chromium chromium-driver;"
    " .ci/run installs them)",
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,1500",
)
SCREENSHOT = ROOT / "docs" / "inspector.png"
"""Rewritten only when HARNESS_WRITE_SCREENSHOT=1, so a test run leaves the checkout clean."""


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="harness-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(
    browser: webdriver.Chrome, recorded: Recorded | Excluding, tmp: Path, *ids: str
) -> None:
    out = tmp / f"{'-'.join(ids)}.html"
    done = harness_cli("view", str(recorded.store), *ids, "-o", str(out))
    assert done.returncode == 0, done.stderr
    browser.get_log("performance")  # what came before this page is not its doing
    browser.get(out.as_uri())


def requests(browser: webdriver.Chrome) -> list[str]:
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_layers_units_and_drops(
    browser: webdriver.Chrome, recorded: Recorded, tmp_path: Path
) -> None:
    open_page(browser, recorded, tmp_path, recorded.b)
    layers = browser.find_elements(By.CSS_SELECTOR, "section.layer")
    names = [layer.get_attribute("data-layer") for layer in layers]
    assert names == [
        "identity",
        "instruction_files",
        "project_context",
        "business_rules",
        "task_state",
    ]
    state = browser.find_element(By.ID, "layer-task_state")
    assert state.find_element(By.CSS_SELECTOR, ".figures").text.endswith("/ 3 tokens")
    dropped = state.find_elements(By.CSS_SELECTOR, ".unit.dropped")
    assert [unit.get_attribute("data-unit-id") for unit in dropped] == ["goal", "done"]
    for unit in dropped:
        status = unit.find_element(By.CSS_SELECTOR, ".status").text
        assert status == "dropped: budget"
        colour = unit.value_of_css_property("border-left-color")
        assert colour == "rgba(192, 57, 43, 1)"  # the budget-drop red
    files = browser.find_element(By.ID, "layer-instruction_files")
    assert len(files.find_elements(By.CSS_SELECTOR, ".bar .seg.kept")) == 5
    text = files.find_element(By.CSS_SELECTOR, ".unit details")
    assert text.get_attribute("open") is None  # collapsed
    for section in ("skills", "tools", "readiness"):
        assert browser.find_element(By.ID, section).text.endswith("none recorded")


def test_recorded_markup_never_runs_and_nothing_is_fetched(
    browser: webdriver.Chrome, recorded: Recorded, tmp_path: Path
) -> None:
    open_page(browser, recorded, tmp_path, recorded.a, recorded.b)
    assert browser.title == f"harness build {recorded.a}"  # no PWNED
    assert browser.find_elements(By.TAG_NAME, "script") == []
    assert browser.find_elements(By.TAG_NAME, "img") == []
    assert browser.find_elements(By.TAG_NAME, "a") == []
    hostile = browser.find_element(By.CSS_SELECTOR, '.unit[data-unit-id="hostile"]')
    hostile.find_element(By.TAG_NAME, "summary").click()
    shown = hostile.find_element(By.TAG_NAME, "pre").text
    assert "<script>document.title='PWNED-script'</script>" in shown
    assert "onerror=" in shown
    assert browser.title == f"harness build {recorded.a}"
    urls = requests(browser)
    assert urls and all(url.startswith("file://") for url in urls), urls


def test_the_injection_check_sees_a_script_that_runs(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    # The control: the same markup left unescaped, in a page without the policy, does run.
    page = tmp_path / "unsafe.html"
    page.write_text(f"<!DOCTYPE html><title>safe</title><body>{INJECTION}</body>")
    browser.get(page.as_uri())
    assert browser.title.startswith("PWNED")


def test_diff_lines(browser: webdriver.Chrome, recorded: Recorded, tmp_path: Path) -> None:
    open_page(browser, recorded, tmp_path, recorded.a, recorded.b)
    diff = browser.find_element(By.ID, "diff")
    refunds = diff.find_element(By.CSS_SELECTOR, '.text-diff[data-unit-id="refunds"]')
    assert [line.text for line in refunds.find_elements(By.CSS_SELECTOR, ".line.del")] == [
        "-Cap: 500 EUR."
    ]
    assert [line.text for line in refunds.find_elements(By.CSS_SELECTOR, ".line.add")] == [
        "+Cap: 750 EUR."
    ]
    added = refunds.find_element(By.CSS_SELECTOR, ".line.add")
    assert added.value_of_css_property("background-color") == "rgba(230, 246, 234, 1)"
    trimmed = diff.find_element(By.CSS_SELECTOR, '.layer-diff[data-layer="task_state"]')
    assert "goal trimmed differently: kept in A, dropped" in trimmed.text


def test_excluded_units_are_shown_as_text(
    browser: webdriver.Chrome, excluding: Excluding, tmp_path: Path
) -> None:
    open_page(browser, excluding, tmp_path, excluding.a, excluding.b)
    assert browser.title == f"harness build {excluding.a}"  # the hostile id did not run
    assert browser.find_elements(By.TAG_NAME, "script") == []
    evidence = browser.find_element(By.CSS_SELECTOR, "#build-a #layer-evidence")
    shown = {
        unit.get_attribute("data-unit-id"): unit.find_element(By.CSS_SELECTOR, ".status").text
        for unit in evidence.find_elements(By.CSS_SELECTOR, ".unit.excluded")
    }
    assert shown == {
        "readme": "excluded: outranked",
        "copy": "excluded: duplicate of prod",
        HOSTILE: "excluded: denied",
    }
    copy = evidence.find_element(By.CSS_SELECTOR, '.unit.excluded[data-unit-id="copy"]')
    assert copy.value_of_css_property("border-left-color") == "rgba(138, 109, 59, 1)"
    skills = browser.find_element(By.CSS_SELECTOR, "#build-a #layer-skills")
    assert "shadowed by .agents/skills/fmt/SKILL.md" in skills.text
    diff = browser.find_element(By.CSS_SELECTOR, "#diff .exclusions-diff")
    assert "+ again (evidence) excluded in B (duplicate of prod)" in diff.text
    assert f"- {HOSTILE} (evidence) excluded in A (denied), not in B" in diff.text
    urls = requests(browser)
    assert urls and all(url.startswith("file://") for url in urls), urls


def distinct_bytes(png: bytes) -> int:
    """How many distinct byte values the decompressed image data holds (a blank page: few)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, data = 8, b""
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        if kind == b"IDAT":
            data += png[position + 8 : position + 8 + length]
        position += 12 + length
    return len(set(zlib.decompress(data)))


def test_screenshot_is_not_blank(
    browser: webdriver.Chrome, recorded: Recorded, tmp_path: Path
) -> None:
    open_page(browser, recorded, tmp_path, recorded.b)
    png = browser.get_screenshot_as_png()
    assert distinct_bytes(png) > 64
    if os.environ.get("HARNESS_WRITE_SCREENSHOT") == "1":
        SCREENSHOT.write_bytes(png)  # the picture docs/inspector.md shows
