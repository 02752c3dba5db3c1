"""Command lines: --version, usage errors that name the argument (never a traceback), and the
EFR runner's time estimate, whose model is checked against the work a tournament really does."""
import runpy
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import labkit as lk
from labkit.experiments import estimate, tournament
from labkit.experiments.__main__ import main as experiments_main
from labkit.grading.__main__ import main as grading_main

from _grading_support import INSTRUCTOR, ROOT

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def _usage_error(main, argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


# ---------------------------------------------------------------- python -m labkit.experiments
def test_experiments_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        experiments_main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"labkit.experiments (labkit {VERSION})"


@pytest.mark.parametrize("argv, message", [
    (["--rounds", "-5"], "argument --rounds: must be at least 1, got -5"),
    (["--rounds", "ten"], "argument --rounds: expected an integer, got 'ten'"),
    (["--workers", "0"], "argument --workers: must be at least 1"),
    (["--rows", "cf", "tipz"], "argument --rows: unknown variant 'tipz'; choose from act, act_in"),
    (["--rows", "cf", "CF"], "argument --rows: cf given more than once"),
    (["--game", "pokr"], "argument --game: unknown game 'pokr'"),
    (["--game", "goofspiel(num_cards=8,imp_info=True)"], "argument --game: goofspiel(num_cards=8"),
    (["--game", "kuhn_poker(players=11)"], "argument --game: "),
    (["--digits", "-1"], "argument --digits: must be at least 0"),
])
def test_experiments_usage_errors_name_the_argument(argv, message, capsys):
    err = _usage_error(experiments_main, ["efr", *argv], capsys)
    assert message in err and "Traceback" not in err


def test_a_game_too_large_to_compile_is_refused_quickly_and_without_a_traceback():
    done = subprocess.run([sys.executable, "-m", "labkit.experiments", "efr", "--game",
                           "goofspiel(num_cards=8,players=2,points_order=descending,imp_info=True)"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "argument --game" in done.stderr and "histories" in done.stderr and done.stdout == ""


def test_estimate_only_prints_a_time_and_runs_nothing(capsys):
    assert experiments_main(["efr", "--game", "kuhn_poker", "--rows", "cf", "tips", "--rounds", "1000",
                             "--workers", "1", "--estimate"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("estimated time: ") and "on 1 worker (fixed regime, 1000 rounds)" in err


def test_the_estimate_is_printed_before_the_run_starts(capsys):
    assert experiments_main(["efr", "--game", "kuhn_poker", "--rows", "cf", "--rounds", "3",
                             "--workers", "1", "--fixed-point", "exact"]) == 0
    out, err = capsys.readouterr()
    assert err.index("estimated time:") < err.index("fixed regime:")         # then the progress bar
    assert "row \\ column      CF" in out


# ---------------------------------------------------------------- the estimate's model
COUNTS = {"build": {}, "update": {}}


class CountingLearner:
    """Plays uniform, counts its constructions and updates per variant (serial runs only)."""

    def __init__(self, game, name):
        self.name, self.policy = name, lk.uniform_policy(game)
        COUNTS["build"][name] = COUNTS["build"].get(name, 0) + 1

    def current_policy(self):
        return self.policy

    def update(self, opponents):
        COUNTS["update"][self.name] = COUNTS["update"].get(self.name, 0) + 1


@pytest.mark.parametrize("regime", ["fixed", "simultaneous"])
@pytest.mark.parametrize("rows, columns", [(["a", "b", "c"], ["a", "b", "c"]), (["a", "b"], ["c", "a"])])
def test_the_estimate_counts_the_work_the_tournament_does(regime, rows, columns, monkeypatch):
    evaluations = []
    real = tournament._seat_values
    monkeypatch.setattr(tournament, "_seat_values", lambda *a: evaluations.append(1) or real(*a))
    COUNTS["build"].clear(), COUNTS["update"].clear()
    rounds = 7
    tournament.efr_tournament("kuhn_poker", rows, columns, regime=regime, rounds=rounds, executor="serial",
                              progress=False, learner=CountingLearner)
    names = set(rows) | set(columns)
    # one second per build, per update or per evaluation, each counted alone: the prediction
    # (serial) is then the number of such events the tournament performs
    unit = {v: 1.0 for v in names}
    zero = {v: 0.0 for v in names}
    predict = lambda build, update, ev: estimate.predict_seconds(  # noqa: E731
        estimate.Costs(build, update, ev), rows, columns, regime, rounds, workers=1)
    assert predict(unit, zero, 0.0) == sum(COUNTS["build"].values())
    assert predict(zero, unit, 0.0) == sum(COUNTS["update"].values())
    assert predict(zero, zero, 1.0) == len(evaluations)
    # per variant: an update costing 1 s only for variant v counts v's updates
    for v in names:
        assert predict(zero, {**zero, v: 1.0}, 0.0) == COUNTS["update"].get(v, 0)


def test_the_estimate_spreads_work_over_workers_but_not_below_one_unit():
    costs = estimate.Costs({"a": 0.0, "b": 0.0}, {"a": 1.0, "b": 2.0}, 0.0)
    serial = estimate.predict_seconds(costs, ["a", "b"], ["a", "b"], "fixed", 3, workers=1)
    assert serial == 12.0                   # columns a and b: 2 updates of a and of b each
    assert estimate.predict_seconds(costs, ["a", "b"], ["a", "b"], "fixed", 3, workers=2) == 6.0
    assert estimate.predict_seconds(costs, ["a", "b"], ["a", "b"], "fixed", 3, workers=8) == 6.0
    with pytest.raises(ValueError, match="regime"):
        estimate.predict_seconds(costs, ["a"], ["a"], "alternating", 3)


def test_measured_costs_are_positive_for_every_variant():
    costs = estimate.measure_costs("kuhn_poker", ["cf", "bhv", "cf"], updates=1)
    assert set(costs.update) == {"cf", "bhv"} and costs.evaluate > 0
    assert all(np.isfinite(t) and t > 0 for t in [*costs.update.values(), *costs.build.values()])


def test_format_seconds():
    assert [estimate.format_seconds(s) for s in (0.2, 40, 210, 9000)] == ["1 s", "40 s", "3.5 min", "2.5 h"]


# ---------------------------------------------------------------- labkit-grade
@pytest.mark.parametrize("extra, message", [
    (["--csv", "/nonexistent-folder/grades.csv"], "--csv: the folder /nonexistent-folder does not exist"),
    (["--jsonl", "."], "--jsonl . is a folder"),
    (["--feedback", str(ROOT / "README.md")], "is a file; give a folder"),
    (["--timeout", "0"], "--timeout must be positive"),
])
def test_grader_usage_errors_name_the_argument(extra, message, capsys):
    nb = ROOT / "solutions" / "27_1_no_regret_minimax.ipynb"
    assert grading_main([str(nb), "--instructor", str(INSTRUCTOR), "--no-sandbox", *extra]) == 2
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------- the scripts users run
SCRIPTS = ["book_config.py", "build_exercises.py", "execute_notebooks.py", "install_cell.py",
           "regenerate_book_data.py", "regenerate_deep.py", "regenerate_efr_results.py", "regenerate_lab15.py"]


def _script(name, args, monkeypatch, capsys):
    """Run scripts/NAME as `python scripts/NAME ARGS...` would, in this process (no interpreter
    start-up per case); returns (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", [name, *args])
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(ROOT / "scripts" / name), run_name="__main__")
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_script_has_version(name, monkeypatch, capsys):
    status, out, err = _script(name, ["--version"], monkeypatch, capsys)
    assert status == 0, err
    assert out.strip() == f"{name} (labkit {VERSION})"


@pytest.mark.parametrize("name, args, message", [
    ("regenerate_efr_results.py", ["--list", "--rounds", "-1"], "argument --rounds: must be at least 1"),
    ("regenerate_lab15.py", ["--jobs", "0"], "argument --jobs: must be at least 1"),
    ("build_exercises.py", ["99.9", "--no-execute"], "unknown exercise(s) 99.9; choose from 27.1"),
    ("execute_notebooks.py", ["--timeout", "-3"], "argument --timeout: must be at least 1"),
])
def test_scripts_refuse_bad_arguments_with_a_usage_error(name, args, message, monkeypatch, capsys):
    status, _, err = _script(name, args, monkeypatch, capsys)
    assert status == 2 and message in err and "Traceback" not in err
