"""Reading the EFR authors' per-round files (labkit.experiments.authors) and comparing a run with
them, on small files written here in their format."""
import numpy as np
import pytest

from labkit.experiments import TournamentResult
from labkit.experiments.authors import (authors_file_name, disagreements, main, read_authors_file,
                                        six_digits)

TWO_ROUNDS = """learner/env  CFR  A-EFR_IN
t = 0
CFR  (-12.3294, 467)  (-12.3294, 242)
A-EFR_IN  (-12.3294, 102)  (5.55112e-17, 105)
BR  (-1.93774, 54)  (-1.93774, 52)
t = 1
CFR  (11.1822, 33)  (13.394, 59.5)
A-EFR_IN  (13.394, 43)  (15.6667, 42)
BR  (2.57885, 54)  (2.63927, 52)
"""


def write(tmp_path, text):
    path = tmp_path / "efr.test.null.fixed.gen.ssv"
    path.write_text(text)
    return path


def test_the_file_becomes_pairs_of_rows_and_columns(tmp_path):
    table = read_authors_file(write(tmp_path, TWO_ROUNDS))
    assert set(table) == {(r, c) for r in ("cf", "act_in", "br") for c in ("cf", "act_in")}
    np.testing.assert_array_equal(table["cf", "act_in"], [-12.3294, 13.394])
    np.testing.assert_array_equal(table["act_in", "act_in"], [5.55112e-17, 15.6667])
    np.testing.assert_array_equal(table["br", "cf"], [-1.93774, 2.57885])


@pytest.mark.parametrize("broken, message", [
    ("CFR  (1, 2)\n", "before the header"),
    (TWO_ROUNDS.replace("(13.394, 59.5)", ""), "1 values for 2 columns"),
    (TWO_ROUNDS.replace("BEHAV", "X").replace("A-EFR_IN", "A-EFR"), "unknown variant 'A-EFR'"),
    (TWO_ROUNDS + "t = 2\nCFR  (1, 2)  (3, 4)\n", r"\('cf', 'cf'\) has 3 of 3|has 2 of 3 rounds"),
])
def test_a_file_out_of_format_is_refused_with_the_line(tmp_path, broken, message):
    with pytest.raises(ValueError, match=message):
        read_authors_file(write(tmp_path, broken))


def result(values):
    """A 2 x 2 fixed-regime result over two rounds, rows and columns cf and act_in."""
    names = ["cf", "act_in"]
    per_round = {r: {c: np.asarray(values[r, c], dtype=float) for c in names} for r in names}
    return TournamentResult("test", "fixed", 2, names, names, per_round)


def test_disagreements_count_what_does_not_print_as_theirs(tmp_path):
    authors = read_authors_file(write(tmp_path, TWO_ROUNDS))
    ours = {("cf", "cf"): [-12.32941, 11.18224], ("cf", "act_in"): [-12.329449, 13.39404],
            ("act_in", "cf"): [-12.3294, 13.394], ("act_in", "act_in"): [-3e-17, 15.66672]}
    # -12.329449 prints as -12.3294 and -3e-17 is a zero as theirs is; 13.39404 prints 13.394;
    # 15.66672 prints 15.6667; 11.18224 prints 11.1822
    assert disagreements(result(ours), authors) == {}
    ours[("act_in", "act_in")] = [-3e-17, 15.66676]
    ours[("cf", "cf")] = [-12.32946, 11.18224]
    assert disagreements(result(ours), authors) == {("act_in", "act_in"): [1], ("cf", "cf"): [0]}
    assert disagreements(result(ours), authors, rounds=1) == {("cf", "cf"): [0]}
    assert disagreements(result(ours), authors, atol=1e-3) == {}


def test_a_pair_the_authors_lack_is_named(tmp_path):
    authors = read_authors_file(write(tmp_path, TWO_ROUNDS))
    del authors["act_in", "cf"]
    with pytest.raises(ValueError, match="act_in"):
        disagreements(result({(r, c): [0, 0] for r in ("cf", "act_in") for c in ("cf", "act_in")}), authors)


def test_file_names_and_printing():
    assert authors_file_name("tiny_bridge_2p", "fixed") == "efr.tiny_bridge.null.fixed.gen.ssv"
    assert authors_file_name("goofspiel5_2p_descending", "simultaneous") == "efr.goofspiel.null.sim.gen.ssv"
    with pytest.raises(ValueError, match="leduc"):
        authors_file_name("kuhn", "fixed")
    np.testing.assert_array_equal(six_digits([20.18513538, -1.2e-17, 18.775076]), [20.1851, -1.2e-17, 18.7751])


def test_command_line_prints_the_count(tmp_path, capsys):
    ours = {("cf", "cf"): [-12.32946, 11.18224], ("cf", "act_in"): [-12.3294, 13.394],
            ("act_in", "cf"): [-12.3294, 13.394], ("act_in", "act_in"): [0.0, 15.6667]}
    run = tmp_path / "run.json"
    result(ours).to_json(run)
    assert main([str(run), str(write(tmp_path, TWO_ROUNDS))]) == 0
    out = capsys.readouterr().out
    assert "1 values in 1 of 4 pairs differ" in out and "cf against cf: first in round 0" in out
    assert main([]) == 2
