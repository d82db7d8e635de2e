"""The viewer in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``)
driven by Selenium loads every suite's stored run, checks the episode list and one trajectory,
and saves screenshots that must not be blank.

Screenshots go to ``$BUILDBENCH_VIEWER_SCREENSHOTS`` when set, else to a pytest temporary folder.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# One Chromium, and the session's stored runs (conftest) built once: every test viewing them shares a worker.
pytestmark = pytest.mark.xdist_group("web-runs")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
#: Seconds allowed for a page (an artefact may run a simulation or an IFC diff first).
WAIT_S = 120


@pytest.fixture(scope="session")
def driver() -> Iterator[Any]:
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("headless Chromium is not installed (Debian packages chromium and chromium-driver; "
                    "tools/bootstrap.sh installs them)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # SwiftShader gives WebGL without a GPU; the sandbox cannot start as root in a container.
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--allow-file-access-from-files"):
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_page_load_timeout(WAIT_S)
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("BUILDBENCH_VIEWER_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("viewer-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def wait_for(driver: Any, what: Callable[[Any], Any], timeout: float = WAIT_S) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # The page redraws its table after each fetch: an element found just before a redraw is
    # stale, which only means "not yet".
    return WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(what)


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def no_page_error(driver: Any) -> None:
    errors = css(driver, "#error")
    assert not errors, errors[0].text


def pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def assert_not_blank(png: bytes, path: Path, min_colours: int = 40) -> np.ndarray:
    """Save ``png`` and check it shows something: many colours and real contrast."""
    path.write_bytes(png)
    img = pixels(png)
    rgb = img.reshape(-1, 3).astype(np.int32)
    # A table of the 2**24 colours marked where seen: np.unique(axis=0) sorts the rows instead,
    # which took most of a test's time on the full-page shots.
    seen = np.zeros(1 << 24, dtype=bool)
    seen[rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2]] = True
    colours = int(np.count_nonzero(seen))
    assert colours >= min_colours and float(img.std()) > 8.0, f"{path} looks blank ({colours} colours)"
    return img


def open_episode(driver: Any, base: str, run: int, name: str, shots: Path) -> dict[str, Any]:
    """Open run ``run``'s list, check it, open its first episode and wait for the 3-D view."""
    driver.get(f"{base}#/run/{run}")
    links = wait_for(driver, lambda d: css(d, "a.episode-link") or no_page_error(d))
    rows = css(driver, "#episodes tbody tr")
    count = driver.execute_script(f"return fetch('api/runs/{run}/episodes').then(r => r.json()).then(j => j.total)") \
        if not base.startswith("file:") else len(rows)
    assert len(rows) == count >= 1
    assert css(driver, "#episodes th.sortable")[0].text.startswith("task")
    assert_not_blank(driver.get_screenshot_as_png(), shots / f"{name}-list.png", min_colours=10)
    links[0].click()
    wait_for(driver, lambda d: css(d, "#stage[data-ready='1']") or no_page_error(d))
    no_page_error(driver)
    return {"turns": len(css(driver, "article.turn:not(.task)"))}


SUITE_RUNS = ["dreamhouse", "buildarena", "bimedit", "scenerevis", "legoeval", "example"]


@pytest.mark.parametrize("name", SUITE_RUNS)
def test_each_suite_lists_episodes_and_opens_a_trajectory(driver: Any, viewer: str, run_ids: dict[str, int],
                                                          stored_runs: dict[str, Path], shots: Path, name: str) -> None:
    from buildbench.harness.store import Store

    seen = open_episode(driver, viewer, run_ids[name], name, shots)
    with Store(stored_runs[name], create=False) as store:
        first = next(store.episodes())
    assert seen["turns"] == len(first.steps)
    assert css(driver, "#episode-title")[0].text.startswith(first.task_id)
    assert css(driver, "#legend li"), "the artefact has a legend"
    canvas = css(driver, "#stage canvas")[0]
    assert_not_blank(canvas.screenshot_as_png, shots / f"{name}-artefact.png")
    assert_not_blank(driver.get_screenshot_as_png(), shots / f"{name}-episode.png")


def test_failing_members_are_red_and_a_finding_highlights_them(driver: Any, viewer: str, run_ids: dict[str, int],
                                                                shots: Path) -> None:
    open_episode(driver, viewer, run_ids["dreamhouse"], "dreamhouse-finding", shots)
    finding = css(driver, "#findings li")[0]
    assert "failed" in finding.text
    finding.click()
    img = assert_not_blank(css(driver, "#stage canvas")[0].screenshot_as_png, shots / "dreamhouse-highlight.png")
    yellow = (img[..., 0] > 180) & (img[..., 1] > 150) & (img[..., 2] < 90)
    assert yellow.sum() > 200, "the failing member named by the finding is not highlighted"


def test_collisions_are_drawn_red(driver: Any, viewer: str, run_ids: dict[str, int], shots: Path) -> None:
    open_episode(driver, viewer, run_ids["scenerevis"], "scenerevis-red", shots)
    img = pixels(css(driver, "#stage canvas")[0].screenshot_as_png)
    red = (img[..., 0] - img[..., 1] > 60) & (img[..., 0] - img[..., 2] > 60)  # red hue, even behind a wall
    assert red.sum() > 500, "no colliding object drawn in red"


def test_machine_trajectory_plays_back(driver: Any, viewer: str, run_ids: dict[str, int], shots: Path) -> None:
    open_episode(driver, viewer, run_ids["buildarena"], "buildarena-play", shots)
    canvas = css(driver, "#stage canvas")[0]
    before = pixels(canvas.screenshot_as_png)
    driver.execute_script("const s = document.getElementById('time-slider'); s.value = s.max;"
                          "s.dispatchEvent(new Event('input'));")
    after = assert_not_blank(canvas.screenshot_as_png, shots / "buildarena-last-frame.png")
    assert css(driver, "#time-label")[0].text != "t = 0.00 s"
    assert np.abs(before - after).sum(axis=2).astype(bool).mean() > 0.001, "the last frame looks like the first"


def test_paging_and_sorting_in_the_page(driver: Any, viewer: str, run_ids: dict[str, int], shots: Path) -> None:
    driver.get(f"{viewer}#/run/{run_ids['big']}")
    wait_for(driver, lambda d: css(d, "a.episode-link"))
    assert "page 1 of 24" in css(driver, "#pager")[0].text
    css(driver, "#next")[0].click()
    wait_for(driver, lambda d: "page 2 of 24" in css(d, "#pager")[0].text)
    wait_for(driver, lambda d: css(d, "a.episode-link")[0].text == "tower_00050")
    css(driver, "#episodes th.sortable")[0].click()  # task: ascending -> descending
    wait_for(driver, lambda d: css(d, "a.episode-link")[0].text == "tower_01199")
    css(driver, "#filter-status option[value='error']")[0].click()
    css(driver, "#filter-apply")[0].click()
    wait_for(driver, lambda d: "120 episode(s) match" in css(d, "#status")[0].text)
    assert_not_blank(driver.get_screenshot_as_png(), shots / "big-run-list.png", min_colours=10)


def test_hostile_strings_are_shown_as_text(driver: Any, viewer: str, run_ids: dict[str, int], shots: Path) -> None:
    from buildbench.harness.store import Store  # noqa: F401 - same import path as the other tests

    open_episode(driver, viewer, run_ids["hostile"], "hostile", shots)
    assert driver.execute_script("return window.__pwned === undefined")
    assert css(driver, "#episode-title")[0].text.startswith('evil<b onmouseover="window.__pwned=3">task</b>')
    reply = css(driver, ".reply pre")[0].text
    assert reply.startswith("<script>window.__pwned = 1</script><img src=x onerror=")
    assert not css(driver, "#app script, #app img[src='x'], #app h1, #app i")
    assert len(css(driver, ".images p.muted")) == 6  # every outside or non-image path refused
    assert_not_blank(driver.get_screenshot_as_png(), shots / "hostile-episode.png", min_colours=10)


def test_static_export_works_from_disk(driver: Any, stored_runs: dict[str, Path], tmp_path: Path,
                                       shots: Path) -> None:
    from buildbench.cli.main import main

    out = tmp_path / "site"
    assert main(["view", str(stored_runs["buildarena"]), str(stored_runs["scenerevis"]), "--static", str(out)]) == 0
    base = (out / "index.html").as_uri()
    seen = open_episode(driver, base, 1, "static-scenerevis", shots)
    assert seen["turns"] >= 1 and css(driver, ".images img")
    assert_not_blank(css(driver, "#stage canvas")[0].screenshot_as_png, shots / "static-scenerevis-artefact.png")
    driver.get(base + "#/compare")
    wait_for(driver, lambda d: len(css(d, "table.task-grid")) == 2 or no_page_error(d))
    assert [t.get_attribute("data-suite") for t in css(driver, "section.suite-compare")] == ["buildarena", "scenerevis"]
    assert css(driver, "svg.metric-chart rect.bar")
    assert_not_blank(driver.get_screenshot_as_png(), shots / "static-compare.png", min_colours=10)
    css(driver, "section.suite-compare[data-suite='scenerevis'] td.cell a")[0].click()
    wait_for(driver, lambda d: css(d, ".sbs-episode .stage[data-ready='1']") or no_page_error(d))
    assert_not_blank(driver.get_screenshot_as_png(), shots / "static-compare-task.png")


def shoot_page(driver: Any, path: Path) -> np.ndarray:
    """The whole page, beyond the window, as one screenshot (Chrome's DevTools protocol)."""
    import base64

    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    return assert_not_blank(base64.b64decode(shot["data"]), path, min_colours=10)


def test_compare_page_charts_a_sweep_and_opens_a_task_side_by_side(driver: Any, sweep_viewer: str,
                                                                      shots: Path) -> None:
    driver.get(f"{sweep_viewer}#/compare")
    wait_for(driver, lambda d: css(d, "table.task-grid") or no_page_error(d))
    charts = css(driver, "svg.metric-chart")
    assert [c.get_attribute("data-metric") for c in charts] == ["passed", "height_ratio", "blocks"]
    assert all(len(c.find_elements("css selector", "rect.bar")) == 2 for c in charts)
    assert len(css(driver, "svg.metric-chart line.whisker")) == 3 * 3 * 2
    values = [t.text for t in css(driver, "svg.metric-chart[data-metric='passed'] text.value")]
    assert values == ["0.000 [0.000, 0.000] n=4", "1.000 [1.000, 1.000] n=4"]
    heads = [th.text for th in css(driver, "table.task-grid th.col-head")]
    assert "max_steps=1" in heads[0] and "max_steps=3" in heads[1]
    rows = css(driver, "table.task-grid tbody tr")
    assert len(rows) == 2
    assert [td.get_attribute("class") for td in rows[0].find_elements("css selector", "td")] == \
        ["cell v-failed", "cell v-solved"]
    assert [td.text for td in rows[0].find_elements("css selector", "td")] == ["0/2", "2/2 +1!"]
    shoot_page(driver, shots / "compare-sweep.png")

    first_task = rows[0].find_elements("css selector", "th.task-id")[0].text
    css(driver, "td.cell[data-column='1'] a")[0].click()
    wait_for(driver, lambda d: len(css(d, ".sbs-episode[data-loaded='1']")) == 5 or no_page_error(d))
    no_page_error(driver)
    assert len(css(driver, ".sbs-episode .stage[data-ready='1']")) == 4
    columns = css(driver, ".sbs-column")
    assert len(columns) == 2
    assert [len(c.find_elements("css selector", ".sbs-episode")) for c in columns] == [2, 3]
    errored = columns[1].find_elements("css selector", ".sbs-episode")[2].text
    assert "the worker died" in errored and "no artefact: the episode ended without an outcome or files" in errored
    assert css(driver, "#compare-task-title")[0].text == first_task
    for i, canvas in enumerate(css(driver, ".sbs-episode canvas")[:2]):
        assert_not_blank(canvas.screenshot_as_png, shots / f"compare-sweep-artefact-{i}.png")
    shoot_page(driver, shots / "compare-sweep-task.png")
    css(driver, "#back-to-compare")[0].click()
    wait_for(driver, lambda d: css(d, "table.task-grid"))


def test_compare_page_of_every_suite_shows_hostile_text_as_text(driver: Any, viewer: str, shots: Path) -> None:
    driver.get(f"{viewer}#/compare")
    wait_for(driver, lambda d: len(css(d, "table.task-grid")) == 6 or no_page_error(d))
    example = css(driver, "section.suite-compare[data-suite='example']")[0]
    assert "different task sets" in example.find_elements("css selector", "p.warn")[0].text
    shown = example.find_elements("css selector", "table.task-grid tbody tr")
    assert len(shown) == 300 and "1203 task(s)" in example.find_elements("css selector", ".grid-count")[0].text
    assert shown[0].find_elements("css selector", "th.task-id")[0].text == 'evil<b onmouseover="window.__pwned=3">task</b>'
    assert driver.execute_script("return window.__pwned === undefined")
    assert not css(driver, "#app script, #app img[src='x'], #app h1, #app i, #app b")
    shoot_page(driver, shots / "compare-every-suite.png")
    example.find_elements("css selector", ".grid-show-all")[0].click()
    wait_for(driver, lambda d: len(example.find_elements("css selector", "table.task-grid tbody tr")) == 1203)
    css(driver, "section.suite-compare[data-suite='buildarena'] td.cell a")[0].click()
    wait_for(driver, lambda d: css(d, ".sbs-episode .stage[data-ready='1']") or no_page_error(d))
    assert_not_blank(css(driver, ".sbs-episode canvas")[0].screenshot_as_png, shots / "compare-buildarena-artefact.png")
    shoot_page(driver, shots / "compare-buildarena-task.png")


def test_compare_grid_shades_a_metric_that_is_no_flag_and_marks_mixed_samples(
        driver: Any, tmp_path: Path, synthetic_run: Callable[..., Path], shots: Path) -> None:
    from buildbench.web.data import ViewerData
    from buildbench.web.runs import open_runs
    from buildbench.web.server import start_server

    # The example suite's `passed` is a declared 0/1 flag: a share is SceneReVis' valid placement.
    shaded = synthetic_run(tmp_path / "shaded", 0, {f"t{i}": [i / 4, i / 4] for i in range(5)},
                           suite="scenerevis", metric="valid_placement")
    flags = synthetic_run(tmp_path / "flags", 1, {"t0": [1.0, 0.0], "t1": [1.0, 1.0]})
    server, thread = start_server(ViewerData(open_runs([shaded])))
    try:
        driver.get(f"{server.url}#/compare")
        wait_for(driver, lambda d: css(d, "table.task-grid td.cell") or no_page_error(d))
        cells = css(driver, "table.task-grid td.cell")
        assert [c.text for c in cells] == ["0.000 ×2", "0.250 ×2", "0.500 ×2", "0.750 ×2", "1.000 ×2"]
        assert all("v-scored" in c.get_attribute("class") for c in cells)
        shades = [np.median(pixels(c.screenshot_as_png).reshape(-1, 3), axis=0).sum() for c in cells]  # text aside
        assert shades == sorted(shades, reverse=True), "higher means must be drawn darker"
        assert "shaded from 0.000 (light) to 1.000 (dark)" in css(driver, ".grid-legend")[0].text
        shoot_page(driver, shots / "compare-shaded.png")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    server, thread = start_server(ViewerData(open_runs([flags])))
    try:
        driver.get(f"{server.url}#/compare")
        wait_for(driver, lambda d: css(d, "table.task-grid td.cell") or no_page_error(d))
        cells = css(driver, "table.task-grid td.cell")
        assert [(c.text, c.get_attribute("class")) for c in cells] == [("1/2", "cell v-mixed"), ("2/2", "cell v-solved")]
        assert cells[0].value_of_css_property("background-color") == "rgba(255, 241, 168, 1)"  # half: yellow
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
