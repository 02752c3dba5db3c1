"""The checks the chapters used to print ("equal: True"), asserted here instead.

Each chapter now shows its reader the result (the strategies, the largest difference between a
from-scratch version and labkit's); these tests assert what must hold, on the same games and
settings as the chapters, and fail if labkit drifts from the chapters' from-scratch code.
(Chapter 9's reruns of the stored Lab 15 files are asserted in tests/test_lab15_data.py,
chapter 8's fixed-magnet check in tests/test_social.py.)
"""
import warnings

import numpy as np
from scipy.optimize import fsolve, linprog

import labkit as lk
from labkit import cooperative, dynamics


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def _chapter2_start():
    rps = lk.games.biased_rock_paper_scissors()
    return rps, np.array(dynamics.CHAPTER_X0), np.array(dynamics.CHAPTER_Y0)


def test_chapter2_scratch_magnet_equals_labkits_dynamics():
    rps, x0, y0 = _chapter2_start()
    A = rps.A

    def step(policy, payoffs, magnet, eta=0.1, alpha=0.2):
        logits = (np.log(policy) + eta * alpha * np.log(magnet) + eta * payoffs) / (1 + eta * alpha)
        return _softmax(logits)

    for reset in (None, 20):
        x, y = x0.copy(), y0.copy()
        magnet_x = magnet_y = np.full(3, 1 / 3)
        for t in range(1, 101):
            x, y = step(x, A @ y, magnet_x), step(y, -(x @ A), magnet_y)
            if reset and t % reset == 0:
                magnet_x, magnet_y = x, y
        method = "regularized, moving magnet" if reset else "regularized, fixed magnet"
        run = dynamics.run(rps, method, steps=100, eta=0.1, alpha=0.2, reset=reset or 200, x0=x0, y0=y0)
        np.testing.assert_allclose(run.x[-1], x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(run.y[-1], y, rtol=0, atol=1e-12)


def test_chapter2_fixed_magnet_ends_at_the_quantal_response_equilibrium():
    rps, x0, y0 = _chapter2_start()
    A, alpha, magnet = rps.A, 0.2, np.full(3, 1 / 3)

    def residual(z):
        x, y = _softmax(np.r_[0, z[:2]]), _softmax(np.r_[0, z[2:]])
        lx, ly = np.log(magnet) + A @ y / alpha, np.log(magnet) - x @ A / alpha
        return np.r_[z[:2] - (lx[1:] - lx[0]), z[2:] - (ly[1:] - ly[0])]

    z = fsolve(residual, np.zeros(4), xtol=1e-12)
    fixed = dynamics.run(rps, "regularized, fixed magnet", steps=10_000, alpha=alpha, x0=x0, y0=y0)
    np.testing.assert_allclose(fixed.x[-1], _softmax(np.r_[0, z[:2]]), rtol=0, atol=1e-9)


def test_chapter2_moving_magnet_reaches_the_equilibrium():
    rps, x0, y0 = _chapter2_start()
    run = dynamics.run(rps, "regularized, moving magnet", steps=10_000, eta=0.1, alpha=0.2, x0=x0, y0=y0)
    assert run.nash_conv[-1] < 1e-12


CARDS = "JQK"
DEALS = [(mine, theirs) for mine in range(3) for theirs in range(3) if mine != theirs]


def _kuhn_payoff(history, cards):
    if history == "bp":
        return 1.0
    if history == "pbp":
        return -1.0
    if history in ("pp", "bb", "pbb"):
        pot = 1.0 if history == "pp" else 2.0
        return pot if cards[0] > cards[1] else -pot
    return None


def _regret_matching(regret):
    positive = np.maximum(regret, 0.0)
    return positive / positive.sum() if positive.sum() > 0 else np.full(len(regret), 1 / len(regret))


def _walk(history, cards, reach, strategy, action_values, strategy_sums):
    """Chapter 3's recursive CFR pass: player 1's value below `history`."""
    payoff = _kuhn_payoff(history, cards)
    if payoff is not None:
        return payoff
    player = len(history) % 2
    key = f"{CARDS[cards[player]]}|{history}"
    sigma, below = strategy[key], np.zeros(2)
    for action, letter in enumerate("pb"):
        child = reach.copy()
        child[player] *= sigma[action]
        below[action] = _walk(history + letter, cards, child, strategy, action_values, strategy_sums)
    sign = 1.0 if player == 0 else -1.0
    action_values[key] += reach[1 - player] / len(DEALS) * sign * below
    strategy_sums[key] += reach[player] * sigma
    return sigma @ below


def test_chapter3_scratch_cfr_equals_labkits_after_five_iterations(kuhn):
    regrets = {key: np.zeros(2) for key in kuhn.infoset_keys}
    sums = {key: np.zeros(2) for key in kuhn.infoset_keys}
    for _ in range(5):
        strategy = {key: _regret_matching(r) for key, r in regrets.items()}
        values = {key: np.zeros(2) for key in regrets}
        for cards in DEALS:
            _walk("", cards, np.ones(2), strategy, values, sums)
        for key, q in values.items():
            regrets[key] += q - strategy[key] @ q
    solver = lk.CFR(kuhn)
    solver.run(5)
    library = solver.tree.to_game_order(solver.cumulative_regret)
    current, average = solver.current_policy().probs, solver.average_policy().probs
    for key in kuhn.infoset_keys:
        k = kuhn.infoset_index(key)
        np.testing.assert_allclose(library[k], regrets[key], rtol=0, atol=1e-12)
        np.testing.assert_allclose(current[k], _regret_matching(regrets[key]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(average[k], sums[key] / sums[key].sum(), rtol=0, atol=1e-12)


def test_chapter3_cfr_plus_average_is_below_1e_4_after_10000_iterations(kuhn):
    solver = lk.CFRPlus(kuhn)
    solver.run(10_000)
    assert lk.nash_conv(kuhn, solver.average_policy()) < 1e-4


def _maximin(M):
    m, k = M.shape
    result = linprog(np.r_[np.zeros(m), -1.0], A_ub=np.c_[-M.T, np.ones(k)], b_ub=np.zeros(k),
                     A_eq=np.r_[np.ones(m), 0.0][None, :], b_eq=[1.0],
                     bounds=[(0, None)] * m + [(None, None)], method="highs")
    return result.x[:m]


def test_chapter5_scratch_psro_equals_lk_psro_on_biased_rock_paper_scissors():
    rps = lk.games.biased_rock_paper_scissors()
    A = rps.A
    meta_solvers = {
        "nash": lambda M: (_maximin(M), _maximin(-M.T)),
        "uniform": lambda M: (np.full(M.shape[0], 1 / M.shape[0]), np.full(M.shape[1], 1 / M.shape[1])),
        "last": lambda M: (np.eye(M.shape[0])[-1], np.eye(M.shape[1])[-1]),
    }
    for name, solve in meta_solvers.items():
        rows, columns, ours = [np.full(3, 1 / 3)], [np.full(3, 1 / 3)], []
        for _ in range(21):
            R, C = np.array(rows), np.array(columns)
            sigma_row, sigma_column = solve(R @ A @ C.T)
            x, y = sigma_row @ R, sigma_column @ C
            ours.append((A @ y).max() - (x @ A).min())
            rows.append(np.eye(3)[np.argmax(A @ y)])
            columns.append(np.eye(3)[np.argmin(x @ A)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            library = lk.PSRO(rps, meta_solver=name)
            library.run(20)
        theirs = [v for _, v in library.nash_conv_history]
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12, err_msg=name)


def test_chapter7_coma_advantages_equal_the_formula():
    Q = np.array([[8.0, 2.0], [6.0, 0.0]])
    pi1, pi2 = np.array([0.5, 0.5]), np.array([0.7, 0.3])
    adv_1, adv_2 = cooperative.coma_advantages(Q, pi1, pi2)
    np.testing.assert_allclose(adv_1, Q - (pi1 @ Q)[None, :], rtol=0, atol=1e-12)
    np.testing.assert_allclose(adv_2, Q - (Q @ pi2)[:, None], rtol=0, atol=1e-12)


def test_chapter9_the_lp_solves_leduc(leduc):
    equilibrium, value = lk.zero_sum_equilibrium(leduc)
    assert lk.nash_conv(leduc, equilibrium) < 1e-8
    assert abs(value - (-0.0856064)) < 1e-7
