"""labkit.plot and labkit.widgets: the figure and widget helpers the chapters share."""
import io
import struct
import sys

import numpy as np
import pytest

import labkit as lk

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_method_colors_are_fixed_and_case_insensitive():
    assert lk.plot.method_color("CFR+") == lk.plot.method_color("cfr+") == "#D55E00"
    assert lk.plot.method_color("Hedge") == lk.plot.method_color("mirror descent")
    # two methods that appear in one figure must not share a colour
    assert lk.plot.method_color("CFR") != lk.plot.method_color("CFR+")
    assert lk.plot.method_color("value iteration") != lk.plot.method_color("minimax-Q")


# the groups of methods that the chapters draw in one figure (chapter 4: networks beside the tabular
# solvers at equal work; chapter 7: the cooperative learners)
FIGURE_GROUPS = [
    ["CFR", "CFR+", "MCCFR (external sampling)", "MCCFR (outcome sampling)", "Deep CFR", "NFSP", "PSRO"],
    ["MMD", "neural MMD", "CFR", "CFR+"],
    ["independent Q-learning", "VDN", "QMIX", "COMA", "MAPPO"],
]


@pytest.mark.parametrize("group", FIGURE_GROUPS)
def test_methods_drawn_together_have_distinct_colors(group):
    colors = [lk.plot.method_color(name) for name in group]
    assert len(set(colors)) == len(group), dict(zip(group, colors))


def test_network_learners_keep_the_colors_chapter_4_used():
    # chapter 4's Leduc figure drew Deep CFR in indigo and NFSP in wine before labkit had them
    assert lk.plot.method_color("Deep CFR") == "#332288"
    assert lk.plot.method_color("nfsp") == "#882255"
    assert lk.plot.method_color("MCCFR") == lk.plot.method_color("MCCFR (external sampling)")
    assert lk.plot.method_color("independent Q") == lk.plot.method_color("IQL")


def test_unknown_method_names_the_known_ones():
    with pytest.raises(ValueError, match="fictitious play"):
        lk.plot.method_color("fictitous play")
    with pytest.raises(TypeError):
        lk.plot.method_color(3)


def test_simplex_coordinates():
    corners = lk.plot.simplex_xy(np.eye(3))
    np.testing.assert_allclose(corners, [[0, 0], [1, 0], [0.5, np.sqrt(3) / 2]])
    np.testing.assert_allclose(lk.plot.simplex_xy([1 / 3, 1 / 3, 1 / 3]), [0.5, np.sqrt(3) / 6])
    with pytest.raises(ValueError, match="3 actions"):
        lk.plot.simplex_xy([0.5, 0.5])


def test_simplex_grid_covers_the_simplex():
    grid = lk.plot.simplex_grid(10)
    assert grid.shape == (66, 3)                       # (r + 1)(r + 2) / 2 points
    np.testing.assert_allclose(grid.sum(axis=1), 1.0)
    assert grid.min() >= 0 and {tuple(p) for p in grid} >= {(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)}
    with pytest.raises(ValueError):
        lk.plot.simplex_grid(0)


def _png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_png_frame_is_deterministic_and_sized_by_figsize_times_dpi():
    def draw(ax):
        lk.plot.draw_simplex(ax, ["rock", "paper", "scissors"])
        lk.plot.mark_point(ax, [0.25, 0.5, 0.25])

    first = lk.widgets.png_frame(draw, figsize=(4, 3), dpi=50)
    assert first == lk.widgets.png_frame(draw, figsize=(4, 3), dpi=50)
    assert _png_size(first) == (200, 150)
    with pytest.raises(TypeError):
        lk.widgets.png_frame("not a function")


def test_slider_stack_links_a_labelled_slider_to_the_frames():
    frames = [lk.widgets.png_frame(lambda ax, k=k: ax.plot([0, k]), figsize=(2, 2), dpi=20) for k in range(3)]
    box = lk.widgets.slider_stack(frames, labels=["a", "b", "c"], description="k", value=1)
    assert box.children == (box.control, box.stack)
    assert box.control.options == ("a", "b", "c") and box.control.index == 1
    assert box.stack.selected_index == 1 and len(box.stack.children) == 3
    assert [img.value for img in box.stack.children] == frames
    plain = lk.widgets.slider_stack(frames)
    assert (plain.control.min, plain.control.max, plain.control.value) == (0, 2, 0)
    with pytest.raises(ValueError, match="3 frames need 3 labels"):
        lk.widgets.slider_stack(frames, labels=["a", "b"])
    with pytest.raises(ValueError, match="distinct"):
        lk.widgets.slider_stack(frames, labels=["a", "a", "b"])


def test_dropdown_and_play_stacks():
    frames = [lk.widgets.png_frame(lambda ax, k=k: ax.plot([0, k]), figsize=(2, 2), dpi=20) for k in range(2)]
    box = lk.widgets.dropdown_stack(frames, ["CFR", "CFR+"], buttons=True)
    assert box.control.options == ("CFR", "CFR+") and box.stack.selected_index == 0
    anim = lk.widgets.play_stack(frames, interval=100)
    assert anim.stack.selected_index == 0 and anim.control.max == 1
    with pytest.raises(ValueError, match="milliseconds"):
        lk.widgets.play_stack(frames, interval=0)
    with pytest.raises(ValueError, match="at least one frame"):
        lk.widgets.image_stack([])


def test_frames_carry_their_description_for_readers_who_cannot_see_them():
    import base64
    frames = [lk.widgets.png_frame(lambda ax, k=k: ax.plot([0, k]), figsize=(2, 2), dpi=20) for k in range(2)]
    box = lk.widgets.slider_stack(frames, alt=["a flat line", 'a "rising" line & more'])
    first, second = box.stack.children
    assert 'alt="a flat line"' in first.value
    assert 'alt="a &quot;rising&quot; line &amp; more"' in second.value
    assert base64.b64encode(frames[1]).decode() in second.value      # the same PNG, inline
    shared = lk.widgets.dropdown_stack(frames, ["CFR", "CFR+"], alt="two strategy tables")
    assert all('alt="two strategy tables"' in frame.value for frame in shared.stack.children)
    assert [frame.value for frame in lk.widgets.play_stack(frames).stack.children] == frames
    with pytest.raises(ValueError, match="list of 2 non-empty strings"):
        lk.widgets.slider_stack(frames, alt=["only one"])
    with pytest.raises(ValueError, match="list of 2 non-empty strings"):
        lk.widgets.slider_stack(frames, alt=["", "empty first"])


def test_convergence_curve_uses_log_scales_and_method_colour():
    from matplotlib.figure import Figure
    ax = Figure().subplots()
    (line,) = lk.plot.convergence_curve(ax, [1, 10, 100], [1.0, 0.1, 0.0], "CFR")
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert line.get_color() == lk.plot.method_color("CFR")
    assert np.all(line.get_ydata() > 0)                  # a zero is drawn at the bottom, not dropped
    with pytest.raises(ValueError, match="one length"):
        lk.plot.convergence_curve(ax, [1, 2], [1.0], "CFR")


def _load_execute_script():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "scripts" / "execute_notebooks.py"
    spec = importlib.util.spec_from_file_location("execute_notebooks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.setdefault("execute_notebooks", module)      # --jobs > 1 pickles its functions by name
    return module


def test_execute_script_runs_in_order_and_never_writes_a_failing_notebook(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from nbformat.v4 import new_code_cell, new_notebook
    script = _load_execute_script()

    good = tmp_path / "good.ipynb"
    expected_error = new_code_cell("raise ValueError('shown on purpose')")
    expected_error.metadata["tags"] = ["raises-exception"]
    nbformat.write(new_notebook(cells=[new_code_cell("x = 6 * 7"), expected_error, new_code_cell("print(x)")]), good)
    _, _, error = script.execute(good, timeout=60)
    assert error is None
    nb = nbformat.read(good, as_version=4)
    assert [c.execution_count for c in nb.cells] == [1, 2, 3]
    assert nb.cells[2].outputs[0].text == "42\n"
    assert nb.metadata.kernelspec.name == "python3"

    bad = tmp_path / "bad.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("1 / 0")]), bad)
    before = bad.read_bytes()
    _, _, error = script.execute(bad, timeout=60)
    assert "ZeroDivisionError" in error
    assert bad.read_bytes() == before                  # the stored outputs are never half-made

    with pytest.raises(SystemExit, match="not a notebook"):
        script.notebook_paths([str(tmp_path / "missing.ipynb")])
    assert script.notebook_paths([str(tmp_path)]) == [bad, good]


def test_execute_script_rewrites_identical_bytes(tmp_path):
    """Widget ids and stream splits would otherwise change on every run and bloat every diff."""
    nbformat = pytest.importorskip("nbformat")
    from nbformat.v4 import new_code_cell, new_notebook
    script = _load_execute_script()
    path = tmp_path / "widgets.ipynb"
    nbformat.write(new_notebook(cells=[
        new_code_cell("import labkit as lk\nfor k in range(3):\n    print(k)"),
        new_code_cell("lk.widgets.slider_stack([lambda ax, k=k: ax.plot([0, k]) for k in range(2)], figsize=(1, 1), dpi=20)"),
    ]), path)
    assert script.main([str(path)]) == 0
    first = path.read_bytes()
    assert script.main([str(path)]) == 0
    assert path.read_bytes() == first
    nb = nbformat.read(path, as_version=4)
    assert len(nb.cells[0].outputs) == 1 and nb.cells[0].outputs[0].text == "0\n1\n2\n"
    view = nb.cells[1].outputs[0].data["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] in nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]


def test_publish_shows_the_figure_as_the_cells_output_and_closes_it(monkeypatch):
    """The figure is the cell's own output (what myst-nb places as the numbered figure, and what
    JupyterLab shows), shown once; pyplot forgets it. Nothing is glued, so no MyST is needed to see it."""
    import matplotlib.pyplot as plt
    import IPython.display
    import myst_nb
    shown, glued = [], []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setattr(myst_nb, "glue", lambda *args, **kw: glued.append(args))
    fig, _ = plt.subplots()
    lk.plot.publish(fig, "fig-test")
    assert shown == [fig] and glued == []
    assert not plt.fignum_exists(fig.number)
    with pytest.raises(TypeError, match="non-empty string"):
        lk.plot.publish(fig, " ")


def test_publish_at_native_size_shows_a_png_of_figsize_times_dpi(monkeypatch):
    """native_size=True: the shown object is a PNG of exactly figsize x dpi pixels, also where the
    reader's rcParams would crop saved figures."""
    import matplotlib
    import matplotlib.pyplot as plt
    import IPython.display
    from PIL import Image
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setitem(matplotlib.rcParams, "savefig.bbox", "tight")

    def png_size(image):
        assert isinstance(image, IPython.display.Image) and image.format == "png"
        return Image.open(io.BytesIO(image.data)).size

    fig, ax = plt.subplots(figsize=(3.1, 1.7), dpi=100)
    ax.set_title("a title the tight crop would keep")
    lk.plot.publish(fig, native_size=True, name="fig-test")
    assert len(shown) == 1 and png_size(shown[0]) == (310, 170)
    assert not plt.fignum_exists(fig.number)

    fig = matplotlib.figure.Figure(figsize=(2.0, 1.2), dpi=50)
    fig.subplots().plot([0, 1])
    lk.plot.publish(fig, "fig-test", native_size=True)
    assert len(shown) == 2 and png_size(shown[1]) == (100, 60)


def test_policy_bars_draw_each_action_share_of_each_infoset():
    from matplotlib.figure import Figure
    ax = Figure().subplots()
    probs = [[0.0, 0.25, 0.75], [0.5, 0.5, 0.0]]
    lk.plot.policy_bars(ax, probs, ["Ks||r|", "Js||r|"], ["fold", "call", "raise"])
    bars = [(round(p.get_x(), 6), round(p.get_width(), 6), round(p.get_y() + p.get_height() / 2, 6))
            for p in ax.patches]
    # one bar segment per (action, infoset), stacked left to right; the first infoset is on top (y = 1)
    assert bars == [(0.0, 0.0, 1.0), (0.0, 0.5, 0.0), (0.0, 0.25, 1.0), (0.5, 0.5, 0.0),
                    (0.25, 0.75, 1.0), (1.0, 0.0, 0.0)]
    assert [(t.get_text(), t.get_position()[1]) for t in ax.get_yticklabels()] == [("Ks||r|", 1), ("Js||r|", 0)]
    with pytest.raises(ValueError, match="shape \\(2, 3\\)"):
        lk.plot.policy_bars(ax, [[1.0, 0.0]], ["a", "b"], ["fold", "call", "raise"])
    with pytest.raises(ValueError, match="probability distribution"):
        lk.plot.policy_bars(ax, [[0.5, 0.6, 0.0]], ["a"], ["fold", "call", "raise"])


def test_policy_slider_has_a_frame_per_checkpoint_and_checks_its_input():
    probs = np.array([[[0.2, 0.8]], [[0.6, 0.4]], [[0.9, 0.1]]])
    box = lk.widgets.policy_slider([10, 100, 1000], probs, ["K"], ["pass", "bet"], nash_conv=[1.0, 0.5, 0.1],
                                   unit="hands", method="NFSP", figsize=(4, 2), dpi=30)
    assert box.control.options == ("10", "100", "1,000") and box.control.index == 2
    assert len(box.stack.children) == 3
    frames = [bytes(img.value) for img in box.stack.children]
    assert len(set(frames)) == 3 and all(f.startswith(b"\x89PNG") for f in frames)
    with pytest.raises(ValueError, match="one value per checkpoint"):
        lk.widgets.policy_slider([10, 100, 1000], probs, ["K"], ["pass", "bet"], nash_conv=[1.0])
    with pytest.raises(ValueError, match="checkpoints must increase"):
        lk.widgets.policy_slider([10, 10, 1000], probs, ["K"], ["pass", "bet"])
    with pytest.raises(ValueError, match="3 checkpoints"):
        lk.widgets.policy_slider([10, 100, 1000], probs[:2], ["K"], ["pass", "bet"])
