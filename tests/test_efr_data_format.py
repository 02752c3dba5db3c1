"""The EFR tournaments' files in labkit/data/efr/: <stem>.json (description, means) beside
<stem>.npz (the per-round values), read back through labkit exactly as the single JSON was.

The SHA-256 each JSON records was computed, when the files were converted, from the per-round
values of the original single JSON files, so a match proves the values are the same bits; the
CSV tables, written by the original runs, must equal the tables computed from the new files to
the last digit.
"""
import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import labkit as lk
from labkit.experiments.results import TournamentResult, _sha256

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "labkit" / "data" / "efr"
STEMS = sorted(p.stem for p in DATA.glob("*.json"))

sys.path.insert(0, str(ROOT / "scripts"))


def test_every_run_is_there():
    assert len(STEMS) == 19 and "leduc_fixed" in STEMS


@pytest.mark.parametrize("stem", STEMS)
def test_every_cached_run_is_a_small_json_beside_its_values(stem):
    data = json.loads((DATA / f"{stem}.json").read_text())
    assert "per_round" not in data, (f"{stem}.json holds its values inline: run "
                                     "scripts/regenerate_efr_results.py --convert labkit/data/efr/*.json")
    assert data["per_round_file"] == f"{stem}.npz" and (DATA / f"{stem}.json").stat().st_size < 20_000
    result = lk.experiments.load_cached(stem)
    values = result.per_round_array()
    assert values.shape == (len(data["rows"]), len(data["columns"]), data["rounds"])
    assert _sha256(values) == data["per_round_sha256"]
    assert result.mean == data["mean"]                      # the stored means, bit for bit


@pytest.mark.parametrize("stem", STEMS)
def test_the_original_tables_follow_from_the_values_to_the_last_digit(stem):
    result = TournamentResult.from_json(DATA / f"{stem}.json")
    rows = list(csv.reader((DATA / f"{stem}.csv").open()))
    units = rows[0][0].split("(")[1].rstrip(")")
    table = np.array([[float(v) for v in row[1:]] for row in rows[1:]])
    np.testing.assert_array_equal(table, result.with_averages(units))


def test_labkit_data_reaches_the_files():
    assert lk.data.path("efr", "leduc_fixed.npz").is_file()
    with np.load(lk.data.path("efr", "leduc_fixed.npz")) as archive:
        assert archive["per_round"].shape == (11, 11, 500)


def _old_format(result, path):
    """A result written in the earlier layout: one JSON with the per-round values inline."""
    path.write_text(json.dumps(result.to_dict()))


def test_old_files_are_read_and_converted_bit_for_bit(tmp_path):
    import regenerate_efr_results
    cached = lk.experiments.load_cached("tiny_hanabi_fixed")
    old = tmp_path / "tiny_hanabi_fixed.json"
    _old_format(cached, old)
    from_old = TournamentResult.from_json(old)                        # still readable
    assert np.array_equal(from_old.per_round_array().view(np.uint64), cached.per_round_array().view(np.uint64))
    assert regenerate_efr_results.convert([old]) == [old]
    assert regenerate_efr_results.convert([old]) == []                # done already: left alone
    new = TournamentResult.from_json(old)
    assert np.array_equal(new.per_round_array().view(np.uint64), cached.per_round_array().view(np.uint64))
    assert new.metadata == cached.metadata and new.rows == cached.rows
    assert (tmp_path / "tiny_hanabi_fixed.npz").read_bytes() == (DATA / "tiny_hanabi_fixed.npz").read_bytes()


def test_a_changed_or_missing_values_file_is_an_error_that_says_what_to_do(tmp_path):
    cached = lk.experiments.load_cached("tiny_hanabi_simultaneous")
    cached.to_json(tmp_path / "r.json")
    other = lk.experiments.load_cached("tiny_hanabi_fixed")
    (tmp_path / "r.npz").write_bytes((DATA / "tiny_hanabi_fixed.npz").read_bytes())
    assert not np.array_equal(other.per_round_array(), cached.per_round_array())
    with pytest.raises(ValueError, match="SHA-256"):
        TournamentResult.from_json(tmp_path / "r.json")
    (tmp_path / "r.npz").unlink()
    with pytest.raises(FileNotFoundError, match="pip install labkit-marl-efr-rounds"):
        TournamentResult.from_json(tmp_path / "r.json")


def test_the_values_file_is_the_same_bytes_for_the_same_values(tmp_path):
    cached = lk.experiments.load_cached("tiny_hanabi_fixed")
    cached.to_json(tmp_path / "a.json")
    cached.to_json(tmp_path / "b.json")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
