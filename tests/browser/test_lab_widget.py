"""Chapter 1 in a real JupyterLab: run every cell, move the slider, and check that the figure changes.

The notebook is a copy with its outputs stripped, so the widget on screen was made by this run.
Screenshots before and after the move are kept in tests/artifacts/.
"""
import re

import pytest


NOTEBOOK = "01_many_learners.ipynb"
# One known error, not this page's: JupyterLab 4.6's cell toolbar measures whether a rendered Markdown
# cell overlaps it through the cell's `renderer`, which the Markdown cell of jupyterlab-myst 2.7.0
# (requirements.txt; `jupyter labextension list` flags it for its older @jupyter/ydoc) lacks. It is
# thrown when such a cell becomes active, and only leaves the toolbar where it was.
KNOWN_ERROR_AT = "_markdownOverlapsToolbar"
WIDGET = ".jp-OutputArea-output .widget-vbox:has(.widget-slider)"


# some cell has started (a "[*]" prompt) or finished (a "[1]" prompt)
STARTED_JS = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
    .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""


def _run_all_cells(page, artifacts, attempts=3):
    """Run > Run All Cells, until a cell has started. Once in a CI run the click was taken while
    JupyterLab was still busy setting up the notebook, and nothing ran: the test then waited out
    its whole safety net. Each attempt that starts nothing leaves a screenshot. (Nothing is clicked
    first to focus the notebook: its first cell's prompt can be hidden, and rendered Markdown can
    hold links.)"""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError   # skipped without playwright
    for attempt in range(1, attempts + 1):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
        try:
            page.wait_for_function(STARTED_JS, timeout=120_000)
            return
        except PlaywrightTimeoutError:
            page.screenshot(path=str(artifacts / f"lab_run_all_not_started_{attempt}.png"))
            page.keyboard.press("Escape")                    # close the menu if it is still open
    pytest.fail(f"Run > Run All Cells started no cell in {attempts} attempts (screenshots in tests/artifacts)")


# every code cell has run: each prompt shows a number
ALL_RAN_JS = """() => {
    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
    return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
}"""
PROMPTS_JS = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
    .map(p => p.textContent.trim())"""


def _wait_until_every_cell_ran(page, artifacts, rounds=3, each=300_000):
    """Wait until every code cell shows a number. The chapter takes 10-20 s on an idle machine; at
    the end of a test run the load test's burners and three grading sandboxes share the two cores
    with this browser, so each round waits up to 5 minutes. A round that ends with cells not run
    and the kernel idle means the Run All stopped (once in a CI run nothing moved for 15 minutes):
    it leaves a screenshot and runs all cells again. The failure names every prompt and the
    kernel's status."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError   # skipped without playwright
    for attempt in range(1, rounds + 1):
        try:
            page.wait_for_function(ALL_RAN_JS, timeout=each)
            return
        except PlaywrightTimeoutError:
            page.screenshot(path=str(artifacts / f"lab_cells_not_all_run_{attempt}.png"))
            prompts = page.evaluate(PROMPTS_JS)
            status = " ".join(page.locator(".jp-StatusBar-Widget").all_text_contents())
            if attempt < rounds and "Idle" in status:
                _run_all_cells(page, artifacts)
    pytest.fail(f"not every cell ran after {rounds} rounds of {each // 1000} s: prompts {prompts}, "
                f"status bar {status!r} (screenshots in tests/artifacts)")


@pytest.mark.browser
def test_chapter_runs_and_slider_changes_the_figure(lab_server, browser, artifacts, image_hash):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90_000)
    errors = []
    page.on("pageerror", lambda err: errors.append((str(err), str(err.stack))))
    page.goto(f"{lab_server['base']}/lab/tree/{NOTEBOOK}?token={lab_server['token']}")
    page.locator(".jp-Notebook").first.wait_for()
    # The toolbar indicator says "idle" before a kernel exists; the status bar names the kernel.
    status = page.locator(".jp-StatusBar-Widget").get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle"))
    status.first.wait_for()
    _run_all_cells(page, artifacts)
    _wait_until_every_cell_ran(page, artifacts)
    assert not page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count(), \
        "a cell wrote to stderr: " + page.locator("[data-mime-type='application/vnd.jupyter.stderr']").first.inner_text()

    widget = page.locator(WIDGET).first
    widget.scroll_into_view_if_needed()
    handle = widget.locator(".noUi-handle").first
    readout = widget.locator(".widget-readout").first
    image = widget.locator("img").first
    image.wait_for()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    # textContent, not innerText: JupyterLab skips rendering cells out of view (content-visibility),
    # and Chromium returns an empty innerText for skipped content
    assert readout.text_content().strip() == "2"
    before = image_hash(image)
    widget.screenshot(path=str(artifacts / "lab_widget_before.png"))

    handle.focus()
    page.keyboard.press("ArrowRight")                         # rock wins 2 -> 3
    page.wait_for_function("el => el.textContent.trim() === '3'", arg=readout.element_handle())
    image = widget.locator("img").first
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    after = image_hash(image)
    widget.screenshot(path=str(artifacts / "lab_widget_after.png"))
    page.screenshot(path=str(artifacts / "lab_notebook.png"))
    assert after != before, "moving the slider did not change the figure"
    errors = [message for message, stack in errors if KNOWN_ERROR_AT not in stack]
    assert not errors, f"JavaScript errors in JupyterLab: {errors}"
    page.close()
