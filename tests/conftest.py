"""Fixtures shared by the library tests: the two poker games, compiled once per session.

(labkit.games.load caches compiled trees, so these are the same objects the library sees.)"""
import pytest

import labkit as lk


@pytest.fixture(scope="session")
def kuhn():
    return lk.games.load("kuhn_poker")


@pytest.fixture(scope="session")
def leduc():
    return lk.games.load("leduc_poker")
