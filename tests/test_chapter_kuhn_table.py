"""The chapter's Kuhn poker table (CFR and CFR+), computed with labkit and compared as printed.

The chapter prints the NashConv (the sum of both players' best-response gains, which it calls
exploitability) of the average policy and, in parentheses, of the current policy.
"""
import pytest

import labkit as lk

CHECKPOINTS = (10, 100, 1000, 10000)
PRINTED = {
    "CFR": "0.1924 (0.382)    0.0513 (0.457)    0.0145 (0.430)    0.0046 (0.299)",
    "CFRPlus": "0.0654 (0.078)    0.0024 (0.081)    0.0002 (0.039)    0.0000 (0.017)",
}
# probability of betting or calling, per card J Q K
PRINTED_STRATEGY = {
    "": "J 0.223   Q 0.000   K 0.668",      # player 1, first move
    "pb": "J 0.000   Q 0.556   K 1.000",    # player 1, after check, bet
    "p": "J 0.333   Q 0.000   K 1.000",     # player 2, after a check
    "b": "J 0.000   Q 0.333   K 1.000",     # player 2, after a bet
}


@pytest.fixture(scope="module")
def cfr_plus_10000(kuhn):
    solver = lk.CFRPlus(kuhn)
    solver.run(10_000)
    return solver


def table_row(game, solver):
    cells = []
    for T in CHECKPOINTS:
        solver.run(T - solver.iteration)
        average = lk.nash_conv(game, solver.average_policy())
        current = lk.nash_conv(game, solver.current_policy())
        cells.append(f"{average:.4f} ({current:.3f})")
    return "    ".join(cells)


@pytest.mark.parametrize("name", ["CFR", "CFRPlus"])
def test_nash_conv_row(kuhn, name):
    assert table_row(kuhn, getattr(lk, name)(kuhn)) == PRINTED[name]


@pytest.mark.parametrize("history", list(PRINTED_STRATEGY))
def test_cfr_plus_average_strategy(kuhn, cfr_plus_10000, history):
    average = cfr_plus_10000.average_policy()
    row = "   ".join(f"{card} {average[f'{card}|{history}']['bet']:.3f}" for card in "JQK")
    assert row == PRINTED_STRATEGY[history]


def test_cfr_plus_value(kuhn, cfr_plus_10000):
    value = lk.expected_payoffs(kuhn, cfr_plus_10000.average_policy())[0]
    assert f"{value:.4f}" == "-0.0556" == f"{-1 / 18:.4f}"
