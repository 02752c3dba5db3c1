"""The published website: stored outputs, figures, math and a widget that works without a kernel.

The site is built from the book's own _config.yml (vendored JavaScript, no CDN) into a temporary
folder, or taken from $BOOK_SITE. Pages are opened over file:// and every request that leaves the
site fails the test, so the checks also prove the pages work offline.
"""
import json
import os
import sys
import time
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import book_config  # noqa: E402  (scripts/ is not a package)

ROOT = Path(__file__).resolve().parents[2]

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def toc_notebooks():
    """The .ipynb files that _toc.yml turns into pages."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [ROOT / f"{page}.ipynb" for page in book_config.toc_files(toc)
            if (ROOT / f"{page}.ipynb").exists()]


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_published_notebook_was_executed_and_stores_its_widgets(path):
    """The site shows stored outputs as they are (execute_notebooks: off), so each page's notebook must
    have been run top to bottom by scripts/execute_notebooks.py, with the state of every widget kept."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    if path.parent.name != "exercises":          # exercises are blank student copies, published unexecuted
        cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
        if cells and cells[0].get("id") == "install-labkit" and cells[0].get("execution_count") is None:
            cells = cells[1:]        # scripts/install_cell.py inserts it unexecuted; it prints nothing
        counts = [c.get("execution_count") for c in cells]
        assert counts == list(range(1, len(counts) + 1)), \
            f"{path.name}: execution counts {counts}; run scripts/execute_notebooks.py {path.relative_to(ROOT)}"
    state = nb["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view:
                assert view["model_id"] in state, f"{path.name}: a widget without stored state would show blank"


def open_offline(browser, url, height=1000):
    """Open a page at 1280 px, recording page errors, console errors, local files that fail to load and
    any request that would leave the local site (which is aborted: the site must work offline)."""
    page = browser.new_page(viewport={"width": 1280, "height": height})
    # Every request passes through the Python route handler below; on a machine at load 20 a page
    # with MathJax and the widget manager can need more than a minute to go quiet.
    page.set_default_timeout(120_000)
    outside, errors = [], []
    # every page error counts (book/_ext/page_fixes.py removes the theme's repeated THEBE_JS_URL script)
    page.on("pageerror", lambda err: errors.append(f"page error: {err}"))

    def console(message):
        # a file that fails to load is also logged as "Failed to load resource"; it is reported
        # below with its address instead
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            errors.append(f"console error: {message.text}")

    page.on("console", console)

    def route(r):
        url = r.request.url
        if url.startswith(("file:", "blob:", "data:")):
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    page.route("**/*", route)
    # A local file that fails to load means something is missing from the site (a MathJax part trimmed
    # too far, the widget manager's fonts, which book/_ext/page_fixes.py points to _static/widgets/fonts)
    page.on("requestfailed", lambda r: r.url.startswith("file:") and errors.append(
        f"missing file {r.url} ({r.failure})"))
    page.goto(url)
    return page, outside, errors


@pytest.mark.browser
def test_chapter_page_shows_figures_and_rendered_math(site, browser, artifacts, image_hash):
    page, outside, errors = open_offline(browser, (site / "chapters" / "01_many_learners.html").as_uri())
    page.wait_for_load_state("load")
    figures = page.locator("figure img")
    assert figures.count() >= 3, "chapter 1 should show at least its three numbered figures"
    for k in range(figures.count()):
        assert len(figures.nth(k).get_attribute("alt") or "") > 40, "a figure without a description"
    assert page.locator("figcaption .caption-number").count() >= 3, "figures should be numbered"
    for k in range(figures.count()):
        figures.nth(k).scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=figures.nth(k).element_handle())
    # MathJax (served from _static/mathjax) typesets the TeX into <mjx-container> elements
    page.wait_for_function("() => document.querySelectorAll('mjx-container').length > 20")
    assert not page.locator("mjx-merror").count(), "MathJax reported an error in a formula"
    page.screenshot(path=str(artifacts / "site_chapter1_top.png"))
    # the launch buttons and the bibliography links are in the page
    html = page.content()
    if not os.environ.get("BOOK_SITE"):      # the test site is built with a repository URL set
        for needle in ("mybinder.org/v2/gh/example-course/labkit-book",
                       "colab.research.google.com/github/example-course/labkit-book"):
            assert needle in html, f"launch button {needle} missing"
    elif not yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]:
        assert "mybinder.org" not in html and "colab.research.google.com" not in html, \
            "a launch button without a repository leads nowhere"
    assert page.locator("a[href*='references.html#id']").count() >= 5, "citations should link to the references page"
    assert not outside, f"the page requested files outside the site: {outside}"
    assert not errors, f"errors on the page: {errors}"
    page.close()


@pytest.mark.browser
def test_static_widget_switches_frames_without_a_kernel(site, browser, artifacts, image_hash):
    page, outside, errors = open_offline(browser, (site / "chapters" / "01_many_learners.html").as_uri())
    widget = page.locator(".widget-vbox:has(.widget-slider)").first
    widget.wait_for()
    widget.scroll_into_view_if_needed()
    readout = widget.locator(".widget-readout").first
    image = widget.locator("img").first
    page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=image.element_handle())
    assert readout.inner_text().strip() == "2"
    before = image_hash(image)
    widget.screenshot(path=str(artifacts / "site_widget_before.png"))

    handle = widget.locator(".noUi-handle").first
    handle.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")                            # rock wins 2 -> 3 -> 4
    page.wait_for_function("el => el.textContent.trim() === '4'", arg=readout.element_handle())
    image = widget.locator("img").first
    page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=image.element_handle())
    after = image_hash(image)
    widget.screenshot(path=str(artifacts / "site_widget_after.png"))
    assert after != before, "the slider moved but the figure stayed the same"

    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")                             # back to 2: the first frame again
    page.wait_for_function("el => el.textContent.trim() === '2'", arg=readout.element_handle())
    image = widget.locator("img").first
    page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=image.element_handle())
    assert image_hash(image) == before

    # the game selector further down (a Dropdown linked by its index)
    selector = page.locator(".widget-vbox:has(.widget-dropdown)").first
    selector.scroll_into_view_if_needed()
    image = selector.locator("img").first
    page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=image.element_handle())
    chicken = image_hash(image)
    selector.locator("select").select_option(label="stag hunt")
    deadline = time.monotonic() + 10                 # the Stack swaps its child view asynchronously
    while image_hash(selector.locator("img").first) == chicken and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert image_hash(selector.locator("img").first) != chicken, "choosing another game did not change the figure"
    selector.screenshot(path=str(artifacts / "site_game_selector.png"))
    assert not outside, f"the widget requested files outside the site: {outside}"
    assert not errors, f"JavaScript errors on the page: {errors}"
    page.close()


@pytest.mark.browser
def test_play_button_and_method_selector_work_without_a_kernel(site, browser, artifacts, image_hash):
    """The Play button needs book/_vendor/site-fixes.js and widgets-fix.css (the theme's Font Awesome
    breaks it otherwise); ToggleButtons switch frames through their linked index."""
    page_path = site / "chapters" / "widget_check.html"
    if not page_path.exists():
        pytest.skip("BOOK_SITE has no widget check page (it exists only in the test's own build)")
    page, outside, errors = open_offline(browser, page_path.as_uri())
    animation = page.locator(".widget-vbox:has(.widget-play)").first
    animation.wait_for()
    readout = animation.locator(".widget-readout").first
    assert readout.inner_text().strip() == "0"
    first = image_hash(animation.locator("img").first)
    animation.locator(".widget-play button").first.click()             # play
    page.wait_for_function("el => el.textContent.trim() === '2'", arg=readout.element_handle())
    animation.locator(".widget-play button").first.click()             # pause
    shown = readout.inner_text().strip()
    page.wait_for_timeout(500)
    assert readout.inner_text().strip() == shown, "pause did not stop the animation"
    assert image_hash(animation.locator("img").first) != first
    animation.screenshot(path=str(artifacts / "site_play_paused.png"))

    selector = page.locator(".widget-vbox:has(.widget-toggle-buttons)").first
    before = image_hash(selector.locator("img").first)
    selector.get_by_role("button", name="MCCFR").click()
    page.wait_for_function(
        "el => el.querySelector('.widget-toggle-button.mod-active')?.textContent.trim() === 'MCCFR'",
        arg=selector.element_handle())
    image = selector.locator("img").first
    page.wait_for_function("img => img.complete && img.naturalWidth > 50", arg=image.element_handle())
    assert image_hash(image) != before
    selector.screenshot(path=str(artifacts / "site_method_selector.png"))
    assert not outside, f"the page requested files outside the site: {outside}"
    assert not errors, f"JavaScript errors on the page: {errors}"
    page.close()
