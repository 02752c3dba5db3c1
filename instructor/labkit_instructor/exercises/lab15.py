"""Lab 15: CFR, CFR+, Monte Carlo CFR and exact best responses on Leduc hold'em, written by the student.

The companion reading is chapters/09_lab15_leduc.ipynb (what to expect, the reference figure and
table).

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/lab15.py).

The hidden checks. Every expected value comes from labkit: exact evaluation (`lk.expected_payoffs`,
`lk.best_response`, `lk.nash_conv`), its solvers (`lk.CFR`, `lk.CFRPlus`, `lk.MCCFR` fed the
grader's random numbers) and, for the hints, *twins*: the same solvers with one ingredient
changed (an average without reach weights, simultaneous instead of alternating updates, an
estimator without importance weights, a best response that ignores the opponent's reach). A
student's answer that matches a twin gets the hint that names the missing ingredient.

The probes are the grader's own: three policies (uniform, a random one, a CFR average), random
numbers drawn from seeds the student does not see, and seeds for the Monte Carlo runs.

Own work. Parts (b)-(j) ask the student to write an evaluator or a solver; the lab states that
their functions may use the game, its arrays and `TabularPolicy`, not labkit's solvers and
evaluators (`labkit.grading.public.lab15.OWN_WORK`). The kernel's reporter records every call
into those while the part's probes run (`labkit.grading.own_work`), and `own_work_gate` gives
such a part 0 with a hint that names the call. Expected values still come from labkit, here.

Time. Where the lab asks for speed (NashConv, 1,000 iterations of CFR+), the budgets are CPU
seconds of the kernel during the call (every thread counted), which a loaded machine barely
changes. NashConv is timed at policies the kernel draws afresh for each call (`labkit.grading.fresh`:
a cache or an earlier cell cannot hold the answer); 1,000 iterations of CFR+ cannot be drawn
afresh, so a call that returns sooner than the iterations can take (`CFR_PLUS_1000_FLOOR`) was
computed before it. A thread busy with the notebook's code when a timed call begins means work
done outside the call: no speed point either way. A call counts as too slow only beyond
`SPEED_MARGIN` times the budget the lab states. The other parts with heavy probes declare CPU
budgets too (`timing`), so that the grader gives their check cells time for them.

The curves of (k) are checked point by point against labkit: CFR, CFR+, both MMD runs and PSRO
exactly (the iterations read off the histories touched), the two MCCFR curves against the spread
of labkit's own runs at the same number of histories touched. Made-up curves fail.
"""
from __future__ import annotations

import threading

import numpy as np

from labkit.grading import fresh
from labkit.grading.checking import cpu_seconds, own_work_gate, recorded
from labkit.grading.public.lab15 import OWN_WORK
from labkit_instructor.checks.sampling import sampled_regrets
from labkit_instructor.checks.base import (computed_once, Grader, Lazy, Wrong, as_array, as_number, kind_of, part_spec,
                                           probe_results, reported)
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, setup, written

LEDUC_SETUP = setup("""
    import time

    import matplotlib.pyplot as plt

    leduc = lk.games.load("leduc_poker")
    CHANCE, TERMINAL = lk.games.CHANCE, lk.games.TERMINAL
""")

# ------------------------------------------------------------------ 1. the game
WALK_TEMPLATE = '''
# states with current_player(), legal_actions(), chance_outcomes(), child(a), returns(),
# infoset_key()
rules = lk.games.LeducPoker()

counts = {"histories": ..., "infosets": ..., "terminal": ...}
'''

WALK_SOLUTION = '''
rules = lk.games.LeducPoker()


def walk(state, keys):
    """(histories, terminal histories) in the subtree of `state`; adds the infoset keys
    it meets to `keys`."""
    player = state.current_player()
    if player == TERMINAL:
        return 1, 1
    if player == CHANCE:
        moves = [outcome for outcome, _ in state.chance_outcomes()]
    else:
        keys.add(state.infoset_key())
        moves = state.legal_actions()
    histories, terminal = 1, 0
    for move in moves:
        below, ends = walk(state.child(move), keys)
        histories, terminal = histories + below, terminal + ends
    return histories, terminal


keys = set()
histories, terminal = walk(rules.initial_state(), keys)
counts = {"histories": histories, "infosets": len(keys), "terminal": terminal}
print(counts)
'''

ARRAYS_TEMPLATE = '''
def expected_payoff(policy):
    """(2,) expected payoffs of the joint `policy`, a (936, 3) array in the order of
    leduc.infoset_keys."""
    ...
'''

ARRAYS_SOLUTION = '''
parent, acting, infoset = leduc.parent, leduc.player, leduc.infoset
action, returns, legal = leduc.action, leduc.returns, leduc.legal_mask
levels = leduc.levels
H = leduc.num_histories
is_terminal = acting == TERMINAL
# the edge into every history: who moved (0, 1, or 2 for chance) and at which infoset
mover = np.full(H, 2)
mover[1:] = np.where(acting[parent[1:]] == CHANCE, 2, acting[parent[1:]])
chosen_at = np.full(H, -1)
chosen_at[1:] = infoset[parent[1:]]
decisions = np.flatnonzero(chosen_at >= 0)           # the edges chosen by a player
# the entry (I, a) of a (936, 3) table that each decision edge follows, as a flat index
cell_of_decision = np.ravel_multi_index((chosen_at[decisions], action[decisions]),
                                        legal.shape)


def edge_probabilities(policy):
    """(H,) probability of the move into each history."""
    edge = leduc.chance_prob.copy()
    edge[decisions] = np.take(policy, cell_of_decision)     # policy[I, a], flat
    return edge


def reach_by_owner(policy):
    """(3, H): player 1's, player 2's and chance's contributions to reaching each
    history."""
    F = np.ones((3, H))
    F[mover[1:], np.arange(1, H)] = edge_probabilities(policy)[1:]
    for lv in levels[1:]:                      # top-down: a level after its parents
        F[:, lv] *= F.take(parent[lv], axis=1)   # F[:, parent[lv]], gathered faster
    return F


def expected_payoff(policy):
    reach = reach_by_owner(policy).prod(axis=0)
    return reach[is_terminal] @ returns[is_terminal]


uniform = lk.uniform_policy(leduc).probs
print("uniform against uniform:", expected_payoff(uniform))
'''

BR_TEMPLATE = '''
def best_response_value(policy, player):
    """The expected payoff of `player` (0 or 1) when it best responds to the other
    player's part of `policy`."""
    ...
'''

BR_SOLUTION = '''
def best_response_value(policy, player):
    F = reach_by_owner(policy)
    # W(h) = pi_{-i}(h) v_i(h): counterfactual values, added up bottom-up
    W = np.where(is_terminal, F[1 - player] * F[2] * returns[:, player], 0.0)
    for lv in reversed(levels[1:]):
        c = np.arange(lv.start, lv.stop)
        p = parent[c]
        mine = acting[p] == player
        np.add.at(W, p[~mine], W[c[~mine]])    # chance and the opponent: add up
        if mine.any():
            cm, pm = c[mine], p[mine]
            score = np.zeros(legal.shape)          # q(I, a) = sum over h in I of W(h a)
            np.add.at(score, (infoset[pm], action[cm]), W[cm])
            best = np.where(legal, score, -np.inf).argmax(axis=1)
            picked = cm[action[cm] == best[infoset[pm]]]
            W[parent[picked]] = W[picked]      # the responder plays its best action
    return W[0]


print("best responses to uniform:", [best_response_value(uniform, p) for p in (0, 1)])
'''

NASH_CONV_TEMPLATE = '''
def nash_conv(policy):
    """NashConv of the joint `policy`."""
    ...
'''

NASH_CONV_SOLUTION = '''
def nash_conv(policy):
    on_policy = expected_payoff(policy)
    return sum(best_response_value(policy, p) - on_policy[p] for p in (0, 1))


start = time.process_time()         # CPU time: what the grader measures, at any load
value = nash_conv(uniform)
seconds = time.process_time() - start
print(f"NashConv of the uniform policy: {value:.10f}")
print("one NashConv takes well under a CPU second:", seconds < 0.5)
'''

# ------------------------------------------------------------------ 3. CFR and CFR+
CFR_TEMPLATE = '''
def cfr(iterations):
    """The average policy, (936, 3), after `iterations` iterations of CFR with
    simultaneous updates and uniform averaging of the reach-weighted strategies."""
    ...
'''

CFR_SOLUTION = '''
# each level below the root: its histories, their parents relative to the first one, and
# the parents' span [first, end) (parents are sorted and all in the level above)
level_parents = [(lv, parent[lv] - parent[lv.start], parent[lv.start],
                  parent[lv.stop - 1] + 1) for lv in levels[1:]]


def history_values(policy):
    """(H, 2) expected payoffs from every history on, bottom-up. Leduc is zero-sum, so
    player 2's values are minus player 1's: one pass gives both (negating is exact)."""
    edge = edge_probabilities(policy)
    v = returns[:, 0].copy()
    for lv, relative, first, end in reversed(level_parents):
        # np.bincount adds up the children of each parent, like np.add.at but faster
        v[first:end] += np.bincount(relative, weights=edge[lv] * v[lv])
    return np.stack([v, -v], axis=1)


# for every decision edge h -> ha, of player i = decider: where pi_i(h), pi_-i(h) and
# chance's pi_c(h) sit in reach_by_owner's flat (3, H) table, and v_i(ha) in
# history_values's flat (H, 2) one
decider, before = mover[decisions], parent[decisions]
own_reach = np.ravel_multi_index((decider, before), (3, H))
opponent_reach = np.ravel_multi_index((1 - decider, before), (3, H))
chance_reach = np.ravel_multi_index((np.full_like(decider, 2), before), (3, H))
value_after = np.ravel_multi_index((decisions, decider), (H, 2))


def counterfactual_values(policy):
    """q (936, 3): q(I, a) = sum over h in I of pi_{-i}(h) v_i(h a);
    own (936,): pi_i(I). The flat gathers (np.take) are several times faster than
    numpy's pair indexing F[1 - i, h]."""
    F, V = reach_by_owner(policy), history_values(policy)
    weights = F.take(opponent_reach) * F.take(chance_reach) * V.take(value_after)
    q = np.bincount(cell_of_decision, weights=weights, minlength=legal.size)
    own = np.zeros(len(legal))
    own[chosen_at[decisions]] = F.take(own_reach)
    return q.reshape(legal.shape), own


uniform_rows = legal / legal.sum(axis=1, keepdims=True)


def regret_matching(R):
    positive = np.maximum(R, 0.0) * legal
    total = positive.sum(axis=1, keepdims=True)
    return np.where(total > 0, positive / np.where(total > 0, total, 1.0), uniform_rows)


def normalize(S):
    total = S.sum(axis=1, keepdims=True)
    return np.where(total > 0, S / np.where(total > 0, total, 1.0), uniform_rows)


def cfr_averages(iterations):
    """Yield the average policy after every iteration of CFR."""
    R, S = np.zeros(legal.shape), np.zeros(legal.shape)
    for _ in range(iterations):
        sigma = regret_matching(R)                   # both players act on sigma^t
        q, own = counterfactual_values(sigma)
        R += (q - (sigma * q).sum(axis=1, keepdims=True)) * legal
        S += own[:, None] * sigma                    # weighted by the own reach
        yield normalize(S)


def cfr(iterations):
    average = uniform_rows
    for average in cfr_averages(iterations):
        pass
    return average


for T in (1, 10, 100):
    print(f"CFR, NashConv after {T:3d} iterations: {nash_conv(cfr(T)):.6f}")
'''

CFR_PLUS_TEMPLATE = '''
def cfr_plus(iterations):
    """The average policy after `iterations` iterations of CFR+: regrets floored at 0,
    alternating updates (player 1 first), iteration t weighted by t in the average."""
    ...
'''

CFR_PLUS_SOLUTION = '''
rows_of = [leduc.infoset_player == p for p in (0, 1)]


def cfr_plus_averages(iterations):
    R, S = np.zeros(legal.shape), np.zeros(legal.shape)
    for t in range(1, iterations + 1):
        for rows in rows_of:                         # player 1, then player 2
            sigma = regret_matching(R)               # includes the other's fresh update
            q, own = counterfactual_values(sigma)
            instant = q[rows] - (sigma[rows] * q[rows]).sum(axis=1, keepdims=True)
            R[rows] = np.maximum(R[rows] + instant * legal[rows], 0.0)
            S[rows] += t * own[rows, None] * sigma[rows]
        yield normalize(S)


def cfr_plus(iterations):
    average = uniform_rows
    for average in cfr_plus_averages(iterations):
        pass
    return average


for T in (1, 10, 100):
    print(f"CFR+, NashConv after {T:3d} iterations: {nash_conv(cfr_plus(T)):.6f}")
'''

THOUSAND_TEMPLATE = '''
# time 1,000 iterations of your cfr_plus here (time.process_time() counts CPU seconds)
'''

THOUSAND_SOLUTION = '''
start = time.process_time()
average_1000 = cfr_plus(1000)
seconds = time.process_time() - start
print(f"CFR+, NashConv after 1,000 iterations: {nash_conv(average_1000):.2e}")
print("1,000 iterations in less than a CPU minute:", seconds < 60)
'''

# ------------------------------------------------------------------ 4. Monte Carlo CFR
OUTCOME_TEMPLATE = '''
def outcome_sampling_regrets(policy, player, uniforms, exploration=0.6):
    """The regret increments of one outcome-sampling episode for `player` at `policy`,
    using the numbers of `uniforms` in order: {infoset key: [one per legal action]}."""
    ...


def sampled_regret_means(policy, player, streams):
    """The mean over the streams of the episodes' increments, as a (936, 3) array."""
    ...
'''

OUTCOME_SOLUTION = '''
import math

first_child = np.searchsorted(parent, np.arange(H))     # children are contiguous
child_count = np.bincount(parent[1:], minlength=H)
legal_actions = [np.flatnonzero(row) for row in legal]
uniform_at = [np.full(len(a), 1 / len(a)) for a in legal_actions]   # never modified
keys = leduc.infoset_keys


def pick(probs, u):
    """The first k whose cumulative probability exceeds u (the last k if rounding leaves
    the total at or below u). A plain loop: on three numbers it is several times faster
    than np.cumsum and np.searchsorted, and it adds up in the same order."""
    total = 0.0
    for k, p in enumerate(probs.tolist()):
        total += p
        if u < total:
            return k
    return len(probs) - 1


def expected(sigma, values):
    """sum_a sigma(a) values(a), rounded once from the exact sum: the same bits on every
    CPU (a numpy dot product's rounding depends on the CPU's BLAS, and one flipped last
    bit in a regret changes which action a later episode samples)."""
    return math.fsum(sigma * values)


def chance_probs(h):
    return leduc.chance_prob[first_child[h]:first_child[h] + child_count[h]]


def outcome_episode(strategy, player, draw, exploration, regrets, sums):
    """Sample one terminal history; add the regret increments to regrets[I] and the
    average's increments pi_i(h) sigma / q(h) to sums[I]. Returns the histories
    touched."""
    h, others, sampled, mine, path = 0, 1.0, 1.0, 1.0, []
    while acting[h] != TERMINAL:
        if acting[h] == CHANCE:
            p = chance_probs(h)
            k = pick(p, draw())
            others, sampled = others * p[k], sampled * p[k]
        else:
            I = infoset[h]
            sigma = strategy(I)
            if acting[h] == player:      # explore: s = eps uniform + (1 - eps) sigma
                s = exploration / len(sigma) + (1 - exploration) * sigma
                k = pick(s, draw())
                path.append((I, sigma, s, k, others, sampled, mine))
                mine, sampled = mine * sigma[k], sampled * s[k]
            else:
                k = pick(sigma, draw())
                others, sampled = others * sigma[k], sampled * sigma[k]
        h = first_child[h] + k
    value = returns[h, player]          # u~(h), the sampled value, walking back
    for I, sigma, s, k, others, q, mine in reversed(path):
        values = np.zeros(len(sigma))
        values[k] = value / s[k]        # importance weight of the sampled action
        value = sigma[k] * values[k]  # the one nonzero term of sum_a sigma(a) values(a)
        regrets[I] = regrets.get(I, 0.0) + others / q * (values - value)
        if sums is not None:
            sums[I] = sums.get(I, 0.0) + mine / q * sigma
    return leduc.depth[h] + 1


def outcome_sampling_regrets(policy, player, uniforms, exploration=0.6):
    policy, regrets = np.asarray(policy), {}
    strategy, draw = (lambda I: policy[I, legal_actions[I]]), iter(uniforms).__next__
    outcome_episode(strategy, player, draw, exploration, regrets, None)
    return {keys[I]: r for I, r in regrets.items()}


def dense(table):
    out = np.zeros(legal.shape)
    for key, row in table.items():
        I = leduc.infoset_index(key)
        out[I, legal_actions[I]] = row
    return out


def sampled_regret_means(policy, player, streams):
    tables = [dense(outcome_sampling_regrets(policy, player, u)) for u in streams]
    return np.mean(tables, axis=0)


# unbiased: the mean over many episodes approaches the exact counterfactual regrets
policy = cfr(5)
q, _ = counterfactual_values(policy)
exact = (q - (policy * q).sum(axis=1, keepdims=True)) * legal * rows_of[0][:, None]
rng = np.random.default_rng(0)
streams = [rng.random(12) for _ in range(5_000)]
samples = np.array([dense(outcome_sampling_regrets(policy, 0, u)) for u in streams])
direction = exact / np.linalg.norm(exact)
along = (samples * direction).sum(axis=(1, 2))
z = (along.mean() - (exact * direction).sum()) / (along.std() / np.sqrt(len(along)))
print(f"mean of {len(streams):,} estimates along the exact regrets: "
      f"{z:+.2f} standard errors off")
'''

EXTERNAL_TEMPLATE = '''
def external_sampling_regrets(policy, player, uniforms):
    """The regret increments of one external-sampling episode for `player` at `policy`:
    {infoset key: [one increment per legal action]}."""
    ...
'''

EXTERNAL_SOLUTION = '''
def external_episode(strategy, player, draw, regrets, sums):
    """Sample chance and the opponent, follow every action of `player`; add regret
    increments to regrets[I] and the opponent's strategies to sums[J]. Returns the
    histories touched."""
    touched = 0

    def value(h):
        nonlocal touched
        touched += 1
        while acting[h] != player:
            if acting[h] == TERMINAL:
                return returns[h, player]
            if acting[h] == CHANCE:
                k = pick(chance_probs(h), draw())
            else:
                sigma = strategy(infoset[h])
                k = pick(sigma, draw())
                if sums is not None:     # the opponent's average: plain sums
                    sums[infoset[h]] = sums.get(infoset[h], 0.0) + sigma
            h = first_child[h] + k
            touched += 1
        I = infoset[h]
        sigma = strategy(I)
        values = np.array([value(first_child[h] + k) for k in range(len(sigma))])
        here = expected(sigma, values)
        regrets[I] = regrets.get(I, 0.0) + values - here
        return here

    value(0)
    return touched


def external_sampling_regrets(policy, player, uniforms):
    policy, regrets = np.asarray(policy), {}
    strategy, draw = (lambda I: policy[I, legal_actions[I]]), iter(uniforms).__next__
    external_episode(strategy, player, draw, regrets, None)
    return {keys[I]: r for I, r in regrets.items()}


increments = external_sampling_regrets(uniform, 0, np.random.default_rng(1).random(64))
for key, r in increments.items():
    print(f"{key:14s}", r)
'''

MCCFR_TEMPLATE = '''
def mccfr(sampling, iterations, seed):
    """The average policy (936, 3) after `iterations` iterations of MCCFR ("outcome"
    or "external" sampling), one episode per player per iteration, the random numbers
    drawn one at a time from np.random.default_rng(seed)."""
    ...
'''

MCCFR_SOLUTION = '''
def mccfr_run(sampling, iterations, seed, checkpoints=()):
    """The average policy after `iterations`, and [(T, histories touched, average)]
    at the checkpoints."""
    draw = np.random.default_rng(seed).random          # one uniform number per call
    regrets, sums, touched, record = {}, {}, 0, []

    def strategy(I):
        if I not in regrets:                 # no regret yet: uniform
            return uniform_at[I]
        positive = np.maximum(regrets[I], 0.0)
        total = positive.sum()
        return positive / total if total > 0 else uniform_at[I]

    def average():
        S = np.zeros(legal.shape)
        for I, row in sums.items():
            S[I, legal_actions[I]] = row
        return normalize(S)

    for T in range(1, iterations + 1):
        for player in (0, 1):
            if sampling == "outcome":
                touched += outcome_episode(strategy, player, draw, 0.6, regrets, sums)
            else:
                touched += external_episode(strategy, player, draw, regrets, sums)
        if T in checkpoints:
            record.append((T, touched, average()))
    return average(), record


def mccfr(sampling, iterations, seed):
    return mccfr_run(sampling, iterations, seed)[0]


mccfr_records = {}          # kept for the figure of (k): NashConv along the way
for sampling, T in (("outcome", 5000), ("external", 1000)):
    marks = np.unique(np.round(np.logspace(1, np.log10(T), 12)).astype(int))
    average, mccfr_records[sampling] = mccfr_run(sampling, T, 0, checkpoints=set(marks))
    print(f"{sampling} sampling, NashConv after {T:,} iterations:",
          round(nash_conv(average), 3))
'''

# ------------------------------------------------------------------ 5. the comparison
CURVES_TEMPLATE = '''
curves = {}     # method -> (histories touched, NashConv), histories increasing
'''

CURVES_SOLUTION = '''
import warnings

grid = np.unique(np.round(np.logspace(0, np.log10(300), 11)).astype(int))   # 1 ... 300


def on_grid(averages, cost, grid):
    x, y = [], []
    for T, average in enumerate(averages, start=1):
        if T in grid:
            x.append(T * cost)
            y.append(nash_conv(average))
    return x, y


curves = {
    "CFR": on_grid(cfr_averages(grid[-1]), H, grid),            # one pass per iteration
    "CFR+": on_grid(cfr_plus_averages(grid[-1]), 2 * H, grid),  # one pass per player
}
for sampling, record in mccfr_records.items():              # the runs of (j)
    curves[f"MCCFR ({sampling} sampling)"] = ([n for _, n, _ in record],
                                              [nash_conv(a) for _, _, a in record])

step = lk.MMD(leduc, alpha=0.02).stepsize                  # alpha / max|M|^2
for name, alpha in (("MMD (no magnet)", 0.0), ("MMD (magnet)", 0.02)):
    solver = lk.MMD(leduc, alpha=alpha, stepsize=step)
    x, y = [], []
    for T in grid:
        solver.run(int(T) - solver.iteration)
        x.append(T * H)                                      # one pass per step
        y.append(nash_conv(solver.current_policy().probs))
    curves[name] = (x, y)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")                          # repeated best responses
    psro = lk.PSRO(leduc, meta_solver="nash")
    psro.run(30)
# iteration k: two best responses and 2k + 1 new meta-game entries, a pass each
cost = np.cumsum([(2 + 2 * k + 1) * H for k in range(1, 31)])
curves["PSRO"] = (list(cost), [v for _, v in psro.nash_conv_history[1:]])

fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
for name, (x, y) in curves.items():
    style = "--" if name == "MMD (no magnet)" else "-"
    lk.plot.convergence_curve(ax, x, y, name.split(" (")[0] if "MMD" in name else name,
                              label=name, linestyle=style, linewidth=1.8)
ax.set_xlabel("histories touched")
ax.set_ylabel("NashConv")
ax.set_title("Leduc hold'em: my solvers beside labkit's MMD and PSRO")
ax.legend(frameon=False, fontsize=8)
plt.show()
for name, (x, y) in curves.items():
    print(f"{name:27s} {x[-1]:>12,.0f} histories touched, NashConv {y[-1]:.4f}")
'''

CONCLUSION = r'''
Per history touched, CFR+ is ahead of everything from a few hundred thousand histories on, and its
average keeps falling about like $1/T$; CFR follows at roughly $1/\sqrt T$. External sampling keeps
pace with CFR per history touched, while outcome sampling, whose importance weights make each
estimate very noisy, lags behind both. The sampled methods win only at the very start, when an
iteration of CFR has not yet finished; their advantage is for games whose tree cannot be walked at
all, which Leduc is not.

MMD's *current* strategy tells a different story: without a magnet it stops improving after a few
dozen steps and oscillates far from equilibrium, since mirror descent cycles; with a fixed magnet it
converges, without any averaging, but to the regularized equilibrium, whose NashConv stays well
above zero (the bias of the magnet). PSRO's double oracle improves quickly per iteration but each
iteration costs more than the last (two best responses and a growing meta-game), so per history
touched it falls behind CFR+. The comparison is only fair because every curve is measured the same
way, by exact NashConv, and charged the same unit of work.
'''

EXERCISE = Exercise("L15", "lab15_leduc_solvers", "Lab 15: solving Leduc hold'em", (
    md(r"""
        # Lab 15 — Solving Leduc hold'em

        In this lab you write, on Leduc hold'em, the algorithms that the companion chapter
        ([Lab 15: Leduc hold'em](../chapters/09_lab15_leduc.ipynb)) runs from labkit: exact
        expected payoffs and best responses, NashConv, CFR and CFR+, and Monte Carlo CFR with
        outcome and external sampling. Then you set your solvers beside labkit's magnetic mirror
        descent and PSRO on one figure. The rules of the game, and what each method is expected
        to reach, are in the chapter; the sampling estimators are those of
        [Scaling up](../chapters/04_scaling_up.ipynb) and PSRO that of
        [Self-play and populations](../chapters/05_self_play_and_populations.ipynb).

        **Policies.** A joint policy is a numpy array of shape `(936, 3)`: row `I` is the
        distribution at the information set `leduc.infoset_keys[I]` over the actions
        `leduc.action_names` = fold, call, raise, zero on illegal actions (`leduc.legal_mask`).
        The grader calls your functions with policies of its own choosing.

        **The compiled tree.** `leduc` is a `GameTree`: its 9,457 histories are numbered breadth
        first (the root is 0) and described by arrays of length `H = leduc.num_histories`:
        `parent`, `action` (the move that led here), `player` (`0`, `1`, `CHANCE` or `TERMINAL`),
        `infoset` (of a decision history, else -1), `chance_prob` (of the edge into a history
        whose parent is a chance node), `returns` (shape `(H, 2)`, nonzero at terminal
        histories) and `depth`. The histories of one depth form the contiguous block
        `leduc.levels[d]` (a `slice`), so a top-down pass handles the levels in order and a
        bottom-up pass in reverse, one numpy operation per level. The children of a history are
        contiguous, in the order of its legal actions (or chance outcomes).

        **Your own work.** In parts (b) to (j) you write an evaluator or a solver, so your
        functions may use numpy, the game (`leduc`, its arrays and methods, `lk.games`),
        `lk.TabularPolicy` and `lk.uniform_policy`, and the functions you wrote in earlier parts,
        but none of labkit's solvers and evaluators (`lk.expected_payoffs`, `lk.best_response`,
        `lk.nash_conv`, `lk.CFR`, `lk.CFRPlus`, `lk.MCCFR`, anything else of `labkit.evaluate`,
        `labkit.cfr`, `labkit.mccfr` and the other solver modules) and none of OpenSpiel. While
        the grader calls a part's functions it records every call they make into that code, by
        whatever name it is reached, and such a part earns 0; the check cell under the part tells
        you the same before you hand in. Outside your functions you may call labkit freely, to
        compare a result of yours with `lk.nash_conv(leduc, policy)`, say. Part (k) sets your
        solvers beside labkit's MMD and PSRO, which it runs from labkit.
    """),
    how_to("L15"),
    SETUP,
    LEDUC_SETUP,
    md(r"""
        ## 1. The game

        ### (a) Walk the tree
        Walk Leduc hold'em yourself, recursively over the states of `lk.games.LeducPoker()`
        (each has `current_player()`, `legal_actions()`, `chance_outcomes()` as (outcome,
        probability) pairs, `child(move)`, `returns()` and `infoset_key()`), and count the
        histories (every state, chance and terminal ones included), the information sets (the
        distinct keys at decision states) and the terminal histories. You should find 9,457
        histories and 936 information sets.
    """),
    answer("L15(a)", WALK_TEMPLATE, WALK_SOLUTION),
    check("L15(a)"),
    md(r"""
        ### (b) Expected payoffs
        Write `expected_payoff(policy)`, the two players' expected payoffs under a joint policy:
        $\sum_z \pi(z)\, u(z)$ over the terminal histories $z$, where $\pi(z)$ multiplies the
        probabilities of all the moves (chance's and the players') on the way to $z$. Use the
        tree's arrays: reach probabilities top-down, level by level (not `lk.expected_payoffs`).
    """),
    answer("L15(b)", ARRAYS_TEMPLATE, ARRAYS_SOLUTION),
    check("L15(b)"),
    md(r"""
        ## 2. Exact best responses and NashConv

        ### (c) Best response
        Write `best_response_value(policy, player)`: the expected payoff of the best response of
        `player` to the other player's part of `policy`. At an information set $I$ of the
        responder, the histories $h \in I$ differ in what the responder cannot see, so the best
        response picks *one* action for all of them, the one with the largest counterfactual
        value $\sum_{h \in I} \pi_{-i}(h)\, v_i(h a)$, where $v_i(h a)$ already assumes the best
        response below. The grader probes your function at policies of its own, uniform and not.
        Write it yourself: `lk.best_response` is what this part asks for.
    """),
    answer("L15(c)", BR_TEMPLATE, BR_SOLUTION),
    check("L15(c)"),
    md(r"""
        ### (d) NashConv, fast
        Write `nash_conv(policy)` $= \sum_i \bigl(\max_{\pi_i'} u_i(\pi_i', \pi_{-i}) - u_i(\pi)\bigr)$.
        It must be exact (the grader compares with labkit's to $10^{-9}$; `lk.nash_conv` itself is
        what you write here) and fast: well under a second per call, since the next parts call it
        after every few iterations. A Python recursion that builds states takes seconds; one numpy
        pass per level of the tree, or a recursion over the arrays that stores each history's value
        once, takes milliseconds.
        The budget is 1 s of CPU time per call, which a busy machine hardly changes. The grader
        times your function at policies it draws afresh for every timed call, so a cache of
        earlier results cannot answer them; it counts the CPU time of the whole notebook during
        the call (a thread of yours working meanwhile counts too, and one busy with your code
        when a timed call begins costs the speed point); and it withholds the speed point only
        beyond 1.5 s.
    """),
    answer("L15(d)", NASH_CONV_TEMPLATE, NASH_CONV_SOLUTION),
    check("L15(d)"),
    md(r"""
        ## 3. CFR and CFR+

        ### (e) CFR
        Write `cfr(iterations)`, returning the average policy. Use the chapter's CFR: in every
        iteration both players play $\sigma^t$, regret matching on the cumulative regrets
        (uniform where no regret is positive), and both update at once,
        $R(I, a) \mathrel{+}= q(I, a) - \sum_b \sigma^t(I, b)\, q(I, b)$ with the counterfactual
        values $q$ of $\sigma^t$; the average adds $\pi_i^{\sigma^t}(I)\, \sigma^t(I, a)$, each
        iteration with weight 1. The grader compares the NashConv of your average after 1, 10
        and 100 iterations with labkit's `lk.CFR` to $10^{-9}$ (and `lk.CFR` is what you write).
    """),
    answer("L15(e)", CFR_TEMPLATE, CFR_SOLUTION),
    check("L15(e)"),
    md(r"""
        ### (f) CFR+
        Write `cfr_plus(iterations)`: regrets floored at zero after every update (regret
        matching+), alternating updates (in iteration $t$ player 1 updates from the current
        strategies, then player 2 updates from the strategies *after* player 1's update), and
        linear averaging (iteration $t$ adds $t\, \pi_i(I)\, \sigma(I, a)$, with the strategy the
        player updated from). Checked like (e), against `lk.CFRPlus`, which you may not call.
    """),
    answer("L15(f)", CFR_PLUS_TEMPLATE, CFR_PLUS_SOLUTION),
    check("L15(f)"),
    md(r"""
        ### (g) A thousand iterations
        The grader runs `cfr_plus(1000)` and measures the NashConv of the result; it must be
        close to labkit's (after a few hundred iterations two correct implementations part ways
        by rounding, because CFR+ sets regrets to exactly zero) and it must compute them within a
        minute of CPU time: the budget is 60 CPU seconds for the 1,000 iterations, and the grader
        withholds the point only beyond 90 s. The time is that of the call itself: a result
        prepared before it (kept from an earlier call or cell, or computed by a thread in the
        background) earns no point, and a thread busy with your code when the call begins costs
        it too. Time it here, in CPU seconds (`time.process_time()`).
    """),
    answer("L15(g)", THOUSAND_TEMPLATE, THOUSAND_SOLUTION),
    check("L15(g)"),
    md(r"""
        ## 4. Monte Carlo CFR

        The grader controls the randomness: your functions take the random numbers as a list
        `uniforms` of numbers in $[0, 1)$, more than an episode needs, and use them in order,
        one for every chance node and every decision node where a move is sampled, picking the
        first outcome whose cumulative probability exceeds the number (outcomes in the order of
        the tree's children). Then the same numbers must give the same update as labkit's
        `lk.MCCFR`. An episode returns its regret increments as a dict
        `{infoset key: [one number per legal action]}` for the information sets it updated.
        As before, write the episodes yourself: `lk.MCCFR` and its helpers are what these parts
        ask for.

        ### (h) Outcome sampling
        Write `outcome_sampling_regrets(policy, player, uniforms, exploration=0.6)`. One
        terminal history is sampled: chance and the other player by their probabilities, the
        updating player by $s = \varepsilon\cdot\text{uniform} + (1-\varepsilon)\,\sigma$. Walking
        back from the terminal $z$, the sampled value of a history is
        $\tilde u(h) = u_i(z) \prod \sigma(a)/s(a)$ over the player's moves between $h$ and $z$;
        at each of the player's information sets on the path, with sampled action $a^*$, the
        action values are $\tilde u(h a^*)/s(a^*)$ for $a^*$ and 0 for the others, and the
        increments are $\frac{\pi_{-i}(h)}{q(h)}\bigl(\text{value}(a) - \sum_b \sigma(b)\,
        \text{value}(b)\bigr)$, $q(h)$ being the probability that the sampling reached $h$. Also
        write `sampled_regret_means(policy, player, streams)`, the mean of your increments over
        a list of streams as a `(936, 3)` array: the grader checks with it, over thousands of
        its own streams, that your estimates are unbiased.
    """),
    answer("L15(h)", OUTCOME_TEMPLATE, OUTCOME_SOLUTION),
    check("L15(h)"),
    md(r"""
        ### (i) External sampling
        Write `external_sampling_regrets(policy, player, uniforms)`: sample every chance node and
        every node of the other player you meet (depth first, the updating player's actions in
        order), follow *every* action of the updating player, and at its information sets add
        $v(I a) - \sum_b \sigma(b)\, v(I b)$, the sampled values below being plain values: no
        importance weights are needed.
    """),
    answer("L15(i)", EXTERNAL_TEMPLATE, EXTERNAL_SOLUTION),
    check("L15(i)"),
    md(r"""
        ### (j) The seeded solvers
        Write `mccfr(sampling, iterations, seed)`: the current strategy is regret matching on
        the cumulative regrets; each iteration runs one episode for player 1 and then one for
        player 2; the random numbers come one at a time from `np.random.default_rng(seed)`. The
        average policy: for outcome sampling add $\frac{\pi_i(h)}{q(h)}\,\sigma(I)$ at the
        updating player's sampled information sets; for external sampling add $\sigma(J)$ at the
        *other* player's information sets where the episode sampled a move. The grader runs your
        solvers with its own seeds and checks that the NashConv of the averages falls in the band
        that labkit's own runs give.
    """),
    answer("L15(j)", MCCFR_TEMPLATE, MCCFR_SOLUTION),
    check("L15(j)"),
    md(r"""
        ## 5. The comparison

        ### (k) One figure
        Put your CFR, CFR+ and two MCCFR solvers beside labkit's magnetic mirror descent
        (`lk.MMD`, its *current* strategy, without a magnet, `alpha=0`, and with one,
        `alpha=0.02`, both with the step size `lk.MMD(leduc, alpha=0.02).stepsize`) and PSRO
        (`lk.PSRO(leduc, "nash")`, its mixture, `nash_conv_history`) on one log–log figure of
        NashConv against the histories touched. Charge a CFR iteration and an MMD step one pass over the tree (9,457
        histories; CFR+ two, one per player), an MCCFR iteration the histories its episodes
        visit, and a PSRO iteration one pass per best response and per new meta-game entry.
        Store the curves in `curves`, keyed `"CFR"`, `"CFR+"`, `"MCCFR (outcome sampling)"`,
        `"MCCFR (external sampling)"`, `"MMD (no magnet)"`, `"MMD (magnet)"` and `"PSRO"`.
        The grader reads the iterations off the histories touched and compares the curves point by
        point with labkit: those of CFR, CFR+, MMD and PSRO with labkit's runs (up to 5,000
        iterations), those of MCCFR with the spread of labkit's own runs at the same number of
        histories touched (up to 50,000 outcome-sampling and 10,000 external-sampling iterations),
        so plot what your solvers compute, measured by exact NashConv.

        Then write your conclusion: which method gets closest per history touched, what the
        current strategies of MMD do with and without a magnet, and what makes the comparison
        fair.
    """),
    answer("L15(k)", CURVES_TEMPLATE, CURVES_SOLUTION),
    check("L15(k)"),
    written("L15(k)", CONCLUSION),
))


# ------------------------------------------------------------------ the hidden checks
GAME = "leduc_poker"
EXPLORATION = 0.6
NASH_CONV_SECONDS = 1.0          # CPU seconds per NashConv on Leduc (the lab's budget)
NASH_CONV_REPEATS = 1            # CPU time hardly varies: a timed call runs once
FRESH_POLICIES = 2               # timed NashConv calls, at policies drawn afresh in the kernel
CFR_PLUS_1000_SECONDS = 60.0     # CPU seconds for 1,000 iterations of CFR+ (the lab's budget)
CFR_PLUS_1000_REPEATS = 1
CFR_PLUS_1000_FLOOR = 0.01       # CPU seconds: 1,000 iterations cannot take less (0.5 ns per history per pass)
SPEED_MARGIN = 1.5               # too slow means slower than SPEED_MARGIN x the budget
SAMPLED_MEANS_SECONDS = 20.0     # CPU budget of one sampled_regret_means probe (2,000 episodes)
MCCFR_SECONDS = 30.0             # CPU budget of one mccfr probe (5,000 or 1,000 iterations)
STREAM_LENGTH = {"outcome": 16, "external": 64}    # more random numbers than one episode uses
MEAN_STREAMS = 2000              # episodes behind the unbiasedness check
MCCFR_RUNS = {"outcome": 5000, "external": 1000}   # iterations of the seeded runs
MCCFR_REFERENCE_SEEDS = range(100, 120)            # labkit's runs that give the band
MCCFR_BAND = (0.8, 1.25)         # band = [0.8 x smallest, 1.25 x largest] of labkit's runs
CFR_PLUS_1000_BAND = (0.8, 1.25)  # NashConv after 1,000 iterations, as a multiple of labkit's
REQUIRED_CURVES = ("CFR", "CFR+", "MCCFR (outcome sampling)", "MCCFR (external sampling)",
                   "MMD (no magnet)", "MMD (magnet)", "PSRO")
MMD_ALPHA = 0.02                 # the magnet's weight in (k); both MMD runs use the step size it gives
CURVE_ITERATIONS = 5000          # points of the exact curves beyond this many iterations are not checked
CURVE_MCCFR_ITERATIONS = {"outcome": 50_000, "external": 10_000}   # labkit's runs behind the MCCFR band
CURVE_MCCFR_SEEDS = range(300, 320)
CURVE_POINTS = 3                 # points of each curve the check must be able to compare, at least
EXACT = 1e-6                     # relative gap of a deterministic curve's point from labkit's


def leduc():
    import labkit as lk
    return lk.games.load(GAME)


# ------------------------------------------------------------------ the grader's probes
def random_policy(seed):
    """A policy with a random distribution (gamma-distributed weights) at every infoset."""
    legal = leduc().legal_mask
    weights = np.random.default_rng(seed).gamma(0.7, size=legal.shape) * legal
    return weights / weights.sum(axis=1, keepdims=True)


def cfr_average(iterations=25):
    import labkit as lk
    solver = lk.CFR(leduc())
    solver.run(iterations)
    return solver.average_policy().probs


def shortened(policy, decimals=10):
    """The policy rounded to `decimals`, its largest entry per row then set so that the row sums
    to 1 again: shorter on its way into the kernel, and still a policy."""
    p = np.round(policy, decimals)
    rows, top = np.arange(len(p)), p.argmax(axis=1)
    p[rows, top] = 0.0
    p[rows, top] = 1.0 - p.sum(axis=1)
    return p


PROBE_POLICIES = 3               # the uniform policy, a random one, CFR's average after 25 iterations


def _probe_policies():
    import labkit as lk
    return [lk.uniform_policy(leduc()).probs, shortened(random_policy(1507)), shortened(cfr_average())]


# the probes are computed when Lab 15 is first graded, not when the material is imported
POLICIES = Lazy(_probe_policies)
PLAYERS = (0, 1)


def stream(seed, length, digits=None):
    """The first `length` uniform numbers of numpy's PCG64 generator seeded with `seed`, which are
    the numbers ``lk.MCCFR(..., seed=np.random.default_rng(seed))`` draws first; the probes round
    them to 6 digits (still numbers in [0, 1), and half as long on their way into the kernel)."""
    u = np.random.default_rng(seed).random(length)
    return (u if digits is None else np.round(u, digits)).tolist()


def _outcome_probes():
    return [(POLICIES[2], 0, stream(5101, 16, 6), EXPLORATION),
            (POLICIES[2], 1, stream(5102, 16, 6), EXPLORATION),
            (POLICIES[1], 0, stream(5103, 16, 6), 0.3),
            (POLICIES[1], 1, stream(5104, 16, 6), EXPLORATION)]


def _mean_probes():
    return [(POLICIES[2], p, [stream(seed, 12, 6) for seed in range(60_000 + 5000 * p,
                                                                     60_000 + 5000 * p + MEAN_STREAMS)])
            for p in PLAYERS]


def _external_probes():
    return [(POLICIES[2], 0, stream(5201, 64, 6)), (POLICIES[2], 1, stream(5202, 64, 6)),
            (POLICIES[1], 0, stream(5203, 64, 6)), (POLICIES[1], 1, stream(5204, 64, 6))]


OUTCOME_PROBES = Lazy(_outcome_probes)
MEAN_PROBES = Lazy(_mean_probes)
EXTERNAL_PROBES = Lazy(_external_probes)
MCCFR_PROBES = [("outcome", MCCFR_RUNS["outcome"], 4401), ("external", MCCFR_RUNS["external"], 4403)]


# ------------------------------------------------------------------ reading answers
def as_policy(v, name):
    """An (I, A) array of probabilities on Leduc: rows on the simplex, zero on illegal actions."""
    game = leduc()
    if not isinstance(v, list):
        raise Wrong(f"`{name}` should be a (936, 3) array of probabilities, got {kind_of(v)}")
    p = as_array(v, name, game.legal_mask.shape)
    if np.any(p < -1e-9) or np.any(np.abs(p.sum(axis=1) - 1) > 1e-6):
        raise Wrong(f"`{name}` should hold a probability distribution in every row")
    if np.any(np.abs(p[~game.legal_mask]) > 1e-12):
        raise Wrong(f"`{name}` puts probability on an illegal action (fold when nobody raised)")
    return p


def as_regret_table(v, name):
    """A {infoset key: increments over the legal actions} table as a dense (I, A) array."""
    game = leduc()
    if not isinstance(v, dict):
        raise Wrong(f"`{name}` should return a dict {{infoset key: increments}}, got {kind_of(v)}")
    out = np.zeros(game.legal_mask.shape)
    for key, row in v.items():
        if key not in game._key_index:
            raise Wrong(f"`{name}` returned a key that is not a Leduc infoset: {key[:20]!r}")
        I = game.infoset_index(key)
        legal = game.legal_actions(I)
        out[I, legal] = as_array(row, f"{name}[{key!r}]", (len(legal),))
    return out


def relative_gap(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.maximum(1.0, np.abs(np.asarray(b)))))


# ------------------------------------------------------------------ (a), (b): the game
def reference_counts():
    game = leduc()
    return {"histories": game.num_histories, "infosets": game.num_infosets, "terminal": len(game.terminals)}


def _grade_a(value):
    g = Grader(value)
    expected = reference_counts()

    def count(*keys):
        def test():
            table = reported(value, "counts")
            if not isinstance(table, dict):
                raise Wrong(f"`counts` should be a dict {{'histories': ..., ...}}, got {kind_of(table)}")
            for key in keys:
                if key not in table:
                    return f"`counts` has no entry {key!r}"
                if as_number(table[key], f"counts[{key!r}]") != expected[key]:
                    return (f"your walk finds a different number of {key}: count every history once, chance "
                            "nodes and terminal ones included, and an infoset once however many histories it has")
            return None
        return test

    g.item("histories and information sets", 1, count("histories", "infosets"))
    g.item("terminal histories", 1, count("terminal"))
    return g.items


def _grade_b(value):
    import labkit as lk
    g = Grader(value)
    game = leduc()

    def at(indices):
        def test():
            results = probe_results(value, "expected_payoff", len(POLICIES))
            for k in indices:
                if not isinstance(results[k], list):
                    raise Wrong(f"`expected_payoff(policy)` should return 2 numbers, got {kind_of(results[k])}")
                got = as_array(results[k], "expected_payoff(policy)", (2,))
                if relative_gap(got, lk.expected_payoffs(game, POLICIES[k])) > 1e-9:
                    return ("`expected_payoff` differs from the exact payoffs: weight each terminal history by "
                            "the product of chance's and both players' probabilities of the moves to it")
            return None
        return test

    g.item("the uniform policy", 1, at([0]))
    g.item("non-uniform policies", 1, at([1, 2]))
    return g.items


# ------------------------------------------------------------------ (c), (d): best responses
def _br_probes():
    return [(policy, p) for policy in POLICIES for p in PLAYERS]


BR_PROBES = Lazy(_br_probes)


def best_response_variant(probs, player, mode):
    """The value of a best response computed three ways, level by level over the tree:

    * "exact": at each infoset I pick argmax_a sum_{h in I} pi_{-i}(h) v(h a) (the true best response);
    * "no reach": pick argmax_a sum_{h in I} v(h a), forgetting the opponent's (and chance's) reach;
    * "per history": pick the best action at every history separately (sees the opponent's card).

    The value returned is the responder's expected payoff against the others' policy. With "exact"
    it equals `lk.best_response(...).value` (tested), which makes this an independent reference.
    """
    import labkit as lk
    game = leduc()
    F = lk.reach_probabilities(game, probs)
    weight = np.ones(game.num_histories) if mode == "no reach" else np.prod(np.delete(F, player, axis=0), axis=0)
    edge = lk.evaluate.edge_probabilities(game, lk.evaluate.policy_array(game, probs))
    V = game.returns[:, player].copy()
    parent, acting = game.parent, game.player
    for lv in reversed(game.levels[1:]):
        children = np.arange(lv.start, lv.stop)
        parents = parent[children]
        mine = acting[parents] == player
        np.add.at(V, parents[~mine], edge[children[~mine]] * V[children[~mine]])
        if not mine.any():
            continue
        cm, pm = children[mine], parents[mine]
        if mode == "per history":
            best = np.full(game.num_histories, -np.inf)
            np.maximum.at(best, pm, V[cm])
            V[np.unique(pm)] = best[np.unique(pm)]
            continue
        score = np.zeros(game.legal_mask.shape)
        np.add.at(score, (game.infoset[pm], game.action[cm]), weight[pm] * V[cm])
        choice = np.where(game.legal_mask, score, -np.inf).argmax(axis=1)
        picked = cm[game.action[cm] == choice[game.infoset[pm]]]
        V[parent[picked]] = V[picked]
    return float(V[0])


@computed_once
def _br_references():
    return {mode: [best_response_variant(policy, p, mode) for policy, p in BR_PROBES]
            for mode in ("exact", "no reach", "per history")}


def _grade_c(value):
    g = Grader(value)
    refs = _br_references()

    def at(indices):
        def test():
            results = probe_results(value, "best_response_value", len(BR_PROBES))
            got = [as_number(results[k], "best_response_value(policy, player)") for k in indices]
            exact = [refs["exact"][k] for k in indices]
            if all(abs(x - e) <= 1e-9 * max(1, abs(e)) for x, e in zip(got, exact)):
                return None
            if all(abs(x - refs["no reach"][k]) <= 1e-9 for x, k in zip(got, indices)):
                return ("your response picks each action as if every history of an information set were equally "
                        "likely: weight each history by the probability that chance and the opponent reach it")
            if all(abs(x - refs["per history"][k]) <= 1e-9 for x, k in zip(got, indices)):
                return ("your response chooses at each history, as if it saw the opponent's card: it must choose "
                        "one action per information set")
            if any(x > e + 1e-9 for x, e in zip(got, exact)):
                return "your value is higher than any strategy can get: choose one action per information set"
            return ("your value is lower than a best response gets: at each information set compare the actions "
                    "by their counterfactual values, computed with the best response below")
        return test

    g.item("against the uniform policy", 1, at([0, 1]))
    g.item("against non-uniform policies", 1, at([2, 3, 4, 5]))
    return g.items


def _nash_conv_probes():
    assert len(POLICIES) == PROBE_POLICIES
    return [(p,) for p in POLICIES] + [(fresh.marker("leduc_policy"),)] * FRESH_POLICIES


def _payoff_probes():
    return [(p,) for p in POLICIES]


NASH_CONV_PROBES = Lazy(_nash_conv_probes)
FRESH_INDICES = range(PROBE_POLICIES, PROBE_POLICIES + FRESH_POLICIES)


def busy_hint(name):
    return (f"while `{name}` was timed, a thread was running your notebook's code: work done outside the "
            "timed call earns no speed point")


def _grade_d(value):
    import labkit as lk
    g = Grader(value)
    game = leduc()
    state = {}

    def correct():
        results = probe_results(value, "nash_conv", len(NASH_CONV_PROBES))
        for r, policy in zip(results, POLICIES):
            got, exact = as_number(r, "nash_conv(policy)"), lk.nash_conv(game, policy)
            if abs(got - exact) > 1e-9 * max(1, abs(exact)):
                return ("NashConv is the sum over both players of (best-response value - value under the "
                        "policy); check both terms for each player")
        state["correct"] = True
        return None

    def fast():
        if not state.get("correct"):
            return "a fast NashConv counts once it is right"
        results = probe_results(value, "nash_conv", len(NASH_CONV_PROBES))
        seeds = recorded(value, "__fresh__", "nash_conv")
        seconds = cpu_seconds(value, "nash_conv")
        if not seeds or not seconds or len(seeds) != len(results) or any(
                seeds[k] is None or seconds[k] is None for k in FRESH_INDICES):
            return "your NashConv could not be timed at a new policy (was the notebook checked by this grader?)"
        for k in FRESH_INDICES:
            exact = lk.nash_conv(game, fresh.draw("leduc_policy", seeds[k]))
            if abs(as_number(results[k], "nash_conv(policy)") - exact) > 1e-9 * max(1, abs(exact)):
                return ("your NashConv is right at the grader's policies but not at the new ones it drew for the "
                        "timing: does it depend on something other than its argument?")
        if any(recorded(value, "__busy__", "nash_conv")[k] for k in FRESH_INDICES):
            return busy_hint("nash_conv")
        slowest = max(seconds[k] for k in FRESH_INDICES)
        if slowest > NASH_CONV_SECONDS * SPEED_MARGIN:
            return (f"your NashConv is right, but one call took {slowest:.1f} CPU s at a policy it had not seen, "
                    f"over the budget of {NASH_CONV_SECONDS:g} s: avoid a Python loop or recursion per history -- "
                    "vectorize over the infosets with numpy passes over the tree's levels (reach top-down, values "
                    "bottom-up), or memoize each history's value within a call so that it is computed once "
                    "(a cache across calls does not help: every timed policy is new)")
        return None

    g.item("NashConv at the grader's policies", 1, correct)
    g.item(f"under {NASH_CONV_SECONDS:g} CPU s per NashConv", 1, fast)
    return g.items


# ------------------------------------------------------------------ (e), (f), (g): CFR and CFR+
CFR_PROBES = [(1,), (10,), (100,)]


def _plain_average(base):
    """A subclass of a labkit CFR solver whose average adds sigma itself, not x_i = pi_i sigma."""

    class PlainAverage(base):
        def _update(self, t, player):
            sigma, before = self._sigma.copy(), self.policy_sum.copy()
            super()._update(t, player)
            self.policy_sum = before + self._average_weight(t) * self._update_masks[player] * sigma

    return PlainAverage


def _variants():
    """name -> (constructor, hint): the two solvers of the lab and their near misses."""
    from labkit.cfr import CFR, CFRPlus
    flags = dict(alternating_updates=True, regret_matching_plus=True, linear_averaging=True)
    return {
        "cfr": (lambda g: CFR(g), None),
        "cfr plain average": (lambda g: _plain_average(CFR)(g),
                              "your average adds the strategies themselves: weight the strategy at an information "
                              "set by the player's own probability of reaching it"),
        "cfr alternating": (lambda g: CFR(g, alternating_updates=True),
                            "that is CFR with alternating updates; the chapter's CFR updates both players from the "
                            "same strategies in every iteration"),
        "cfr_plus": (lambda g: CFRPlus(g), None),
        "cfr_plus plain average": (lambda g: _plain_average(CFR)(g, **flags),
                                   "your average adds the strategies themselves: weight them by the player's own "
                                   "reach (and by t)"),
        "cfr_plus no floor": (lambda g: CFR(g, alternating_updates=True, linear_averaging=True),
                              "CFR+ floors the cumulative regrets at 0 after every update"),
        "cfr_plus simultaneous": (lambda g: CFR(g, regret_matching_plus=True, linear_averaging=True),
                                  "CFR+ updates the players in turn: player 1, then player 2 with player 1's new "
                                  "strategy"),
        "cfr_plus uniform average": (lambda g: CFR(g, alternating_updates=True, regret_matching_plus=True),
                                     "CFR+ weights iteration t by t in the average"),
    }


@computed_once
def trajectory(name, last=100):
    """NashConv of the variant's average after 1, 10, 100 (and 1,000 if last=1000) iterations."""
    solver = _variants()[name][0](leduc())
    out = {}
    for T in (1, 10, 100, 1000):
        if T > last:
            break
        solver.run(T - solver.iteration)
        out[T] = solver.nash_conv()
    return out


def _twin_hint(got, family):
    """The hint of the near miss whose NashConv after 10 and 100 iterations the answer matches."""
    other = "cfr_plus" if family == "cfr" else "cfr"
    for name, (_, hint) in _variants().items():
        if name == other:
            hint = f"that is the trajectory of {'CFR+' if other == 'cfr_plus' else 'CFR'}, not of this part's solver"
        elif not name.startswith(family + " "):
            continue
        ref = trajectory(name)
        if all(abs(got[T] - ref[T]) <= 1e-9 for T in (10, 100)):
            return hint
    return None


def _grade_cfr(value, name, family, label):
    g = Grader(value)
    reference = trajectory(family)
    got = {}

    def run():
        import labkit as lk
        if not got:
            results = probe_results(value, name, len(CFR_PROBES))
            for (T,), r in zip(CFR_PROBES, results):
                got[T] = lk.nash_conv(leduc(), as_policy(r, f"{name}({T})"))
        return got

    def at(iterations):
        def test():
            nash_convs = run()
            if all(abs(nash_convs[T] - reference[T]) <= 1e-9 for T in iterations):
                return None
            return _twin_hint(nash_convs, family) or (
                f"NashConv of your average after {max(iterations)} iterations differs from {label}'s: check the "
                "regret update (counterfactual values weighted by the others' reach) and the average")
        return test

    g.item("after 1 and 10 iterations", 1, at((1, 10)))
    g.item("after 100 iterations", 1, at((100,)))
    return g.items


def _grade_e(value):
    return _grade_cfr(value, "cfr", "cfr", "CFR")


def _grade_f(value):
    return _grade_cfr(value, "cfr_plus", "cfr_plus", "CFR+")


def _grade_g(value):
    import labkit as lk
    g = Grader(value)

    def thousand():
        result = probe_results(value, "cfr_plus", 1)[0]
        got = lk.nash_conv(leduc(), as_policy(result, "cfr_plus(1000)"))
        ref = trajectory("cfr_plus", last=1000)[1000]
        # CFR+ floors regrets at exactly 0, so rounding differences of 1e-17 change which actions are
        # played after a few hundred iterations: the trajectories stay close, not equal to 1e-9
        if not CFR_PLUS_1000_BAND[0] * ref <= got <= CFR_PLUS_1000_BAND[1] * ref:
            return ("after 1,000 iterations your CFR+ average is further from labkit's than rounding explains: "
                    "get 100 iterations right first")
        seconds = cpu_seconds(value, "cfr_plus")
        if not seconds or seconds[0] is None:
            return "your cfr_plus(1000) could not be timed (was the notebook checked by this grader?)"
        if (recorded(value, "__busy__", "cfr_plus") or [0])[0]:
            return busy_hint("cfr_plus")
        if seconds[0] < CFR_PLUS_1000_FLOOR:
            return (f"cfr_plus(1000) returned after {seconds[0]:.4f} CPU s, less than 1,000 iterations of CFR+ on "
                    "Leduc can take: its result was computed before the call (a cache, a thread, an earlier cell), "
                    "and the point is for computing it in the call")
        if seconds[0] > CFR_PLUS_1000_SECONDS * SPEED_MARGIN:
            return (f"your CFR+ is right, but 1,000 iterations took {seconds[0]:.0f} CPU s, over the budget of "
                    f"{CFR_PLUS_1000_SECONDS:g} s: compute the counterfactual values of all infosets in one numpy "
                    "pass per level of the tree instead of a Python loop or recursion per history, and reuse "
                    "the tree's arrays between iterations rather than rebuilding them")
        return None

    g.item("1,000 iterations, in time", 1, thousand)
    return g.items


# ------------------------------------------------------------------ (h), (i): sampled regrets
def labkit_episode(policy, player, sampling, uniforms, exploration=EXPLORATION):
    """The (I, A) regret increments of one labkit MCCFR episode at `policy`, fed `uniforms`.

    The solver's regrets are set to the policy's probabilities, so regret matching plays `policy`;
    its generator is replaced by one that hands out the given numbers. The numpy backend: its
    Python episode draws through `_draw` and reads the `regrets` lists set here (the compiled
    one, `lk.kernels`, gives the same numbers from its own buffer and tables)."""
    import labkit as lk
    game = leduc()
    with lk.kernels.using("numpy"):
        solver = lk.MCCFR(game, sampling=sampling, seed=0, exploration=exploration)
    for I, actions in enumerate(solver.flat.legal_actions):
        solver.regrets[I] = [float(x) for x in np.asarray(policy)[I, actions]]
    solver._sigma = [None] * game.num_infosets
    solver._draw = iter(uniforms).__next__          # the episode draws through this method
    return solver.sampled_regrets(player)


def outcome_episode(policy, player, uniforms, exploration=EXPLORATION, importance=True):
    """Outcome sampling's (I, A) regret increments on Leduc for one stream of uniform numbers
    (`labkit_instructor.checks.sampling`); with importance=True these are labkit's (tested)."""
    return sampled_regrets(leduc(), policy, player, uniforms, exploration, importance)


@computed_once
def _episode_references():
    return {"outcome": [labkit_episode(p, i, "outcome", u, e) for p, i, u, e in OUTCOME_PROBES],
            "no importance": [outcome_episode(p, i, u, e, importance=False) for p, i, u, e in OUTCOME_PROBES],
            "external": [labkit_episode(p, i, "external", u) for p, i, u in EXTERNAL_PROBES]}


def exact_regrets(policy, player):
    """(I, A) counterfactual regrets q(I, a) - v(I) of `policy` at `player`'s infosets (0 elsewhere)."""
    import labkit as lk
    game = leduc()
    q = lk.counterfactual_values(game, policy)
    r = (q - (policy * q).sum(axis=1, keepdims=True)) * game.legal_mask
    r[game.infoset_player != player] = 0.0
    return r


@computed_once
def _mean_bands():
    """For each mean probe: the direction w of the exact regrets, E[w . r~] and the standard error
    of the mean of w . r~ over the probe's streams, estimated from labkit's own episodes."""
    bands = []
    for policy, player, streams in MEAN_PROBES:
        exact = exact_regrets(policy, player)
        w = exact / np.linalg.norm(exact)
        samples = np.array([np.sum(w * outcome_episode(policy, player, u)) for u in streams])
        bands.append((w, float(np.sum(w * exact)), float(samples.std(ddof=1) / np.sqrt(len(samples)))))
    return bands


def _grade_h(value):
    g = Grader(value)

    def exact():
        refs = _episode_references()
        results = probe_results(value, "outcome_sampling_regrets", len(OUTCOME_PROBES))
        got = [as_regret_table(r, "outcome_sampling_regrets(...)") for r in results]
        if all(relative_gap(x, y) <= 1e-9 for x, y in zip(got, refs["outcome"])):
            return None
        if all(relative_gap(x, y) <= 1e-9 for x, y in zip(got, refs["no importance"])):
            return ("your estimates leave out the importance weights: divide the sampled value by the probability "
                    "of having sampled it (q(h) for the history, s(a) for the sampled action)")
        return ("with the grader's random numbers your increments differ from the reference episode: use one number "
                "per chance and decision node on the path, in order, and check the weights pi_-i(h) / q(h)")

    def unbiased():
        results = probe_results(value, "sampled_regret_means", len(MEAN_PROBES))
        for r, (w, expected, se) in zip(results, _mean_bands()):
            if not isinstance(r, list):
                raise Wrong(f"`sampled_regret_means(...)` should return a (936, 3) array, got {kind_of(r)}")
            mean = as_array(r, "sampled_regret_means(...)", leduc().legal_mask.shape)
            if abs(np.sum(w * mean) - expected) > 4 * se + 1e-9:
                return ("the mean of your estimates over the grader's episodes is more than 4 standard errors from "
                        "the exact counterfactual regrets: the estimator is biased")
        return None

    g.item("the same random numbers give labkit's update", 1, exact)
    g.item("unbiased over many episodes", 1, unbiased)
    return g.items


def _grade_i(value):
    g = Grader(value)

    def exact():
        refs = _episode_references()["external"]
        results = probe_results(value, "external_sampling_regrets", len(EXTERNAL_PROBES))
        got = [as_regret_table(r, "external_sampling_regrets(...)") for r in results]
        if all(relative_gap(x, y) <= 1e-9 for x, y in zip(got, refs)):
            return None
        return ("with the grader's random numbers your increments differ from the reference episode: walk every "
                "action of the updating player in order, and draw one number per chance or opponent node you meet")

    g.item("the same random numbers give labkit's update", 1, exact)
    return g.items


# ------------------------------------------------------------------ (j): the seeded solvers
@computed_once
def mccfr_band(sampling):
    import labkit as lk
    values = []
    for seed in MCCFR_REFERENCE_SEEDS:
        solver = lk.MCCFR(leduc(), sampling=sampling, seed=seed, exploration=EXPLORATION)
        solver.run(MCCFR_RUNS[sampling])
        values.append(solver.nash_conv())
    return MCCFR_BAND[0] * min(values), MCCFR_BAND[1] * max(values)


def _grade_j(value):
    import labkit as lk
    g = Grader(value)

    def within(sampling):
        def test():
            results = probe_results(value, "mccfr", len(MCCFR_PROBES))
            low, high = mccfr_band(sampling)
            for (kind, iterations, seed), r in zip(MCCFR_PROBES, results):
                if kind != sampling:
                    continue
                nc = lk.nash_conv(leduc(), as_policy(r, f"mccfr({kind!r}, {iterations}, seed)"))
                if nc > high:
                    return (f"after {iterations:,} iterations your {sampling}-sampling average is further from "
                            "equilibrium than every run of labkit's: check the weights of the regrets and of the "
                            "average" + (" (pi_i(h) / q(h) for outcome sampling)" if sampling == "outcome" else ""))
                if nc < low:
                    return (f"after {iterations:,} iterations your {sampling}-sampling average is closer to "
                            "equilibrium than sampling can get: are you computing exact values?")
            return None
        return test

    g.item("outcome sampling in labkit's band", 1, within("outcome"))
    g.item("external sampling in labkit's band", 1, within("external"))
    return g.items


# ------------------------------------------------------------------ (k): the comparison
class _Trajectory:
    """NashConv of a deterministic labkit solver's policy after T iterations, computed on demand
    (the solver runs on as far as asked, once; the grader's threads share it under a lock)."""

    def __init__(self, make, policy):
        self.make, self.policy = make, policy
        self.solver, self.values, self.lock = None, {}, threading.Lock()

    def at(self, iterations):
        import labkit as lk
        with self.lock:
            for T in sorted(set(iterations) - set(self.values)):
                if self.solver is None or self.solver.iteration > T:
                    self.solver = self.make()
                self.solver.run(T - self.solver.iteration)
                self.values[T] = lk.nash_conv(leduc(), self.policy(self.solver))
            return {T: self.values[T] for T in iterations}


@computed_once
def curve_reference(name):
    """The labkit run behind an exact curve of (k)."""
    import labkit as lk
    average, current = (lambda s: s.average_policy().probs), (lambda s: s.current_policy().probs)
    step = lk.MMD(leduc(), alpha=MMD_ALPHA).stepsize
    makers = {"CFR": (lambda: lk.CFR(leduc()), average),
              "CFR+": (lambda: lk.CFRPlus(leduc()), average),
              "MMD (no magnet)": (lambda: lk.MMD(leduc(), alpha=0.0, stepsize=step), current),
              "MMD (magnet)": (lambda: lk.MMD(leduc(), alpha=MMD_ALPHA, stepsize=step), current)}
    return _Trajectory(*makers[name])


_psro_lock = threading.Lock()


@computed_once
def psro_history(iterations):
    """NashConv of labkit's PSRO mixture (`lk.PSRO(leduc, "nash")`) after 0, 1, ..., iterations."""
    import warnings
    import labkit as lk
    with _psro_lock, warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # repeated best responses
        psro = lk.PSRO(leduc(), meta_solver="nash")
        psro.run(iterations)
    return [v for _, v in psro.nash_conv_history]


@computed_once
def mccfr_curves(sampling):
    """labkit's runs behind the band of an MCCFR curve: [(histories touched, NashConv)] at 25
    checkpoints from 1 to `CURVE_MCCFR_ITERATIONS` iterations, one run per seed."""
    import labkit as lk
    T = CURVE_MCCFR_ITERATIONS[sampling]
    marks = np.unique(np.round(np.logspace(0, np.log10(T), 25)).astype(int))
    runs = []
    for seed in CURVE_MCCFR_SEEDS:
        solver = lk.MCCFR(leduc(), sampling=sampling, seed=seed, exploration=EXPLORATION)
        x, y = [], []
        for mark in marks:
            solver.run(int(mark) - solver.iteration)
            x.append(solver.nodes_touched)
            y.append(solver.nash_conv())
        runs.append((np.array(x, float), np.array(y)))
    return runs


def mccfr_curve_band(sampling, x):
    """(low, high) of the band at histories touched `x` (arrays), NaN outside the range every
    reference run covers: [0.8 x smallest, 1.25 x largest] of labkit's runs, interpolated in log-log."""
    runs = mccfr_curves(sampling)
    first, last = max(r[0][0] for r in runs), min(r[0][-1] for r in runs)
    x = np.asarray(x, float)
    inside = (x >= first) & (x <= last)
    values = np.array([np.exp(np.interp(np.log(np.where(inside, x, first)), np.log(rx), np.log(ry)))
                       for rx, ry in runs])
    low = np.where(inside, MCCFR_BAND[0] * values.min(axis=0), np.nan)
    high = np.where(inside, MCCFR_BAND[1] * values.max(axis=0), np.nan)
    return low, high


def _exact_curve(name, x, y, cost, label):
    """None, or the hint for the first point of an exact curve that is not labkit's."""
    T = x / cost
    if np.any(np.abs(T - np.round(T)) > 1e-6 * T) or np.any(np.round(T) < 1):
        return (f"`curves[{name!r}]`: charge {cost:,} histories touched per iteration, so every point sits at a "
                f"whole number of iterations; {x[np.argmax(np.abs(T - np.round(T)))]:,.0f} does not")
    T = np.round(T).astype(int)
    checked = [k for k in range(len(T)) if T[k] <= CURVE_ITERATIONS]
    if len(checked) < CURVE_POINTS:
        return (f"`curves[{name!r}]` needs {CURVE_POINTS} or more points within the first {CURVE_ITERATIONS:,} "
                "iterations, for the grader to compare")
    reference = curve_reference(name).at([int(T[k]) for k in checked])
    for k in checked:
        ref = reference[int(T[k])]
        close = abs(y[k] - ref) <= EXACT * max(1.0, abs(ref))
        if name == "CFR+" and T[k] > 100:             # rounding parts CFR+ runs after a few hundred iterations
            close = CFR_PLUS_1000_BAND[0] * ref <= y[k] <= CFR_PLUS_1000_BAND[1] * ref
        if not close:
            return (f"`curves[{name!r}]`: after {T[k]:,} iterations ({x[k]:,.0f} histories) your curve says "
                    f"NashConv {y[k]:.4g}, but {label} has {ref:.4g}: plot the exact NashConv of what the "
                    "solver computes")
    return None


def _psro_curve(x, y):
    history = psro_history(min(len(y) + 1, 60))
    for offset in (1, 0):                             # with or without the first policy's point
        ref = history[offset:offset + len(y)]
        if len(ref) == len(y) and all(abs(a - b) <= EXACT * max(1.0, abs(b)) for a, b in zip(y, ref)):
            return None
    return ("`curves['PSRO']` is not the NashConv of lk.PSRO(leduc, \"nash\")'s mixture iteration by iteration "
            "(nash_conv_history)")


def _mccfr_curve(name, sampling, x, y):
    low, high = mccfr_curve_band(sampling, x)
    checked = np.flatnonzero(~np.isnan(low))
    if len(checked) < CURVE_POINTS:
        return (f"`curves[{name!r}]` needs {CURVE_POINTS} or more points between {x.min():,.0f} and the "
                f"histories touched by {CURVE_MCCFR_ITERATIONS[sampling]:,} iterations, for the grader to compare")
    for k in checked:
        if not low[k] <= y[k] <= high[k]:
            return (f"`curves[{name!r}]`: at {x[k]:,.0f} histories touched your curve says NashConv {y[k]:.3g}, "
                    f"outside what labkit's runs give there ({low[k]:.3g} to {high[k]:.3g}): count the histories "
                    "each episode visits, and plot the exact NashConv of your average")
    return None


def _grade_k(value):
    g = Grader(value)
    H = leduc().num_histories

    def curves():
        table = reported(value, "curves")
        if not isinstance(table, dict):
            raise Wrong(f"`curves` should be a dict {{method: (histories touched, NashConv)}}, got {kind_of(table)}")
        missing = [name for name in REQUIRED_CURVES if name not in table]
        if missing:
            return f"`curves` has no curve named {missing[0]!r}"
        points = {}
        for name in REQUIRED_CURVES:
            pair = table[name]
            if not isinstance(pair, list) or len(pair) != 2:
                return f"`curves[{name!r}]` should be a pair (histories touched, NashConv)"
            x, y = as_array(pair[0], f"{name}: histories"), as_array(pair[1], f"{name}: NashConv")
            if x.ndim != 1 or x.shape != y.shape or len(x) < 5:
                return f"`curves[{name!r}]` needs two equally long sequences of 5 or more numbers"
            if np.any(np.diff(x) <= 0) or x[0] <= 0 or np.any(y < -1e-9):
                return f"`curves[{name!r}]`: histories touched must grow and NashConv cannot be negative"
            points[name] = (x, y)
        return (_exact_curve("CFR", *points["CFR"], H, "CFR (your cfr, as (e) checks it)")
                or _exact_curve("CFR+", *points["CFR+"], 2 * H, "CFR+ (your cfr_plus, as (f) checks it)")
                or _mccfr_curve("MCCFR (outcome sampling)", "outcome", *points["MCCFR (outcome sampling)"])
                or _mccfr_curve("MCCFR (external sampling)", "external", *points["MCCFR (external sampling)"])
                or _exact_curve("MMD (no magnet)", *points["MMD (no magnet)"], H,
                                "lk.MMD(leduc, alpha=0) with the lab's step size")
                or _exact_curve("MMD (magnet)", *points["MMD (magnet)"], H,
                                f"lk.MMD(leduc, alpha={MMD_ALPHA}) with the lab's step size")
                or _psro_curve(*points["PSRO"]))

    g.item("the curves of the figure, point by point", 1, curves)
    return g.items


def _own(part, grade):
    return own_work_gate(part, OWN_WORK[part], grade)


PARTS = [
    part_spec("L15(a)", ["counts"], _grade_a, 2),
    part_spec("L15(b)", ["expected_payoff"], _own("L15(b)", _grade_b), 2, {"expected_payoff": Lazy(_payoff_probes)}),
    part_spec("L15(c)", ["best_response_value"], _own("L15(c)", _grade_c), 2, {"best_response_value": BR_PROBES}),
    part_spec("L15(d)", ["nash_conv"], _own("L15(d)", _grade_d), 2, {"nash_conv": NASH_CONV_PROBES},
              {"nash_conv": (NASH_CONV_SECONDS, NASH_CONV_REPEATS)}),
    part_spec("L15(e)", ["cfr"], _own("L15(e)", _grade_e), 2, {"cfr": CFR_PROBES}),
    part_spec("L15(f)", ["cfr_plus"], _own("L15(f)", _grade_f), 2, {"cfr_plus": CFR_PROBES}),
    part_spec("L15(g)", ["cfr_plus"], _own("L15(g)", _grade_g), 1, {"cfr_plus": [(1000,)]},
              {"cfr_plus": (CFR_PLUS_1000_SECONDS, CFR_PLUS_1000_REPEATS)}),
    part_spec("L15(h)", ["outcome_sampling_regrets", "sampled_regret_means"], _own("L15(h)", _grade_h), 2,
              {"outcome_sampling_regrets": OUTCOME_PROBES, "sampled_regret_means": MEAN_PROBES},
              {"sampled_regret_means": (SAMPLED_MEANS_SECONDS, 1)}),
    part_spec("L15(i)", ["external_sampling_regrets"], _own("L15(i)", _grade_i), 1,
              {"external_sampling_regrets": EXTERNAL_PROBES}),
    part_spec("L15(j)", ["mccfr"], _own("L15(j)", _grade_j), 2, {"mccfr": MCCFR_PROBES},
              {"mccfr": (MCCFR_SECONDS, 1)}),
    part_spec("L15(k)", ["curves"], _grade_k, 1),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of Lab 15 (Leduc hold'em): shapes, probability rows, zero-sum and zero-mean
properties at a public policy and a public stream of random numbers, and values at two public
policies whose answers are worked out by hand (the grader's own policies are other ones).

The hand-worked cases. `TIMID` folds whenever folding is legal and otherwise checks or calls;
`BOLD` raises whenever it may and otherwise calls. Whatever the cards:

* `BOLD` for player 1 against `TIMID` for player 2: player 1 raises, player 2 folds, so the
  payoffs are (+1, -1), the ante won; with the roles swapped they are (-1, +1). Weighting each of
  the 30 deals by 1 instead of by its probability 1/30 gives (30, -30) instead.
* Against `TIMID`, a player never sees the other put more than the ante in the pot (it folds to
  every raise), and it wins the ante by raising: each best-response value is 1, and the NashConv
  of `TIMID` (both players) is 1 + 1 - 0 = 2.
* CFR's first iteration plays the uniform policy. Against it, checking (or calling) at a first
  decision does better than raising, whatever the card, so regret matching plays check/call there
  in the second iteration. The average weights each iteration by the player's own reach, 1 at a
  first decision: after 2 iterations CFR's average there is (0, 3/4, 1/4) (the mean of the uniform
  (0, 1/2, 1/2) and (0, 1, 0)), and CFR+'s, which weights iteration t by t, is
  (1/2 + 2) / 3 = 5/6 and 1/6. After 3 iterations of CFR+ every legal action keeps at least a sixth
  of its uniform probability (the first iteration's weight, 1 of 6).
"""
import numpy as np

from labkit.grading.fresh import marker
from labkit.grading.own_work import OwnWork
from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, as_number, expect, probe_results, reported

OWN_WORK = {
    "L15(b)": OwnWork("compute the expected payoffs yourself"),
    "L15(c)": OwnWork("write the best response yourself"),
    "L15(d)": OwnWork("write NashConv yourself"),
    "L15(e)": OwnWork("write CFR yourself"),
    "L15(f)": OwnWork("write CFR+ yourself"),
    "L15(g)": OwnWork("write CFR+ yourself"),
    "L15(h)": OwnWork("write outcome sampling yourself"),
    "L15(i)": OwnWork("write external sampling yourself"),
    "L15(j)": OwnWork("write Monte Carlo CFR yourself"),
}
NASH_CONV_SECONDS = 1.0      # the lab's budget: CPU seconds per NashConv

CURVES = ("CFR", "CFR+", "MCCFR (outcome sampling)", "MCCFR (external sampling)", "MMD (no magnet)",
          "MMD (magnet)", "PSRO")


def _leduc():
    import labkit as lk
    return lk.games.load("leduc_poker")


def _leaning():
    """A public policy: fold, call and raise weighted 1, 2, 3 over the legal actions."""
    weights = _leduc().legal_mask * np.array([1.0, 2.0, 3.0])
    return weights / weights.sum(axis=1, keepdims=True)


STREAM = np.random.default_rng(15).random(64).tolist()


def _preferring(order):
    """The pure policy playing the first legal action of `order` (0 fold, 1 check/call, 2 raise)."""
    legal = _leduc().legal_mask
    first = np.argmax(legal[:, order], axis=1)
    policy = np.zeros(legal.shape)
    policy[np.arange(len(legal)), np.asarray(order)[first]] = 1.0
    return policy


def _seats(first, second):
    """Player 1 plays `first`, player 2 `second` (rows by the infoset's player)."""
    return np.where((_leduc().infoset_player == 0)[:, None], first, second)


TIMID, BOLD = _preferring([0, 1, 2]), _preferring([2, 1, 0])
BOLD_VS_TIMID, TIMID_VS_BOLD = _seats(BOLD, TIMID), _seats(TIMID, BOLD)
CHANCE_HINT = ("at a chance node weight each outcome by its probability (each of the 30 deals has probability "
               "1/30)")


def _counts(value):
    table = reported(value, "counts")
    if not isinstance(table, dict):
        raise Wrong("`counts` should be a dict with the entries 'histories', 'infosets' and 'terminal'")
    for key in ("histories", "infosets", "terminal"):
        v = as_number(table.get(key), f"counts[{key!r}]") if key in table else None
        if v is None or v < 1 or not float(v).is_integer():
            raise Wrong(f"`counts[{key!r}]` should be a positive whole number")


def _counts_agree(value):
    """The counts against each other and against the rows of the game's policy arrays."""
    table = reported(value, "counts")
    rows = _leduc().legal_mask.shape[0]
    if table["infosets"] != rows:
        raise Wrong(f"a Leduc policy array has one row per information set, {rows} rows; `counts['infosets']` "
                    f"is {table['infosets']}")
    if not table["terminal"] < table["histories"]:
        raise Wrong("the terminal histories are some of the histories: count every history, chance's and the "
                    "players' included")
    if not table["infosets"] < table["histories"]:
        raise Wrong("every information set holds at least one history, and the chance and terminal histories "
                    "belong to none: there are fewer information sets than histories")


def _zero_sum(value):
    payoff = as_array(probe_results(value, "expected_payoff", 3)[0], "expected_payoff(policy)", (2,))
    if abs(payoff.sum()) > 1e-9:
        raise Wrong("poker is zero-sum: the two expected payoffs add up to 0")


def _payoff_cases(value):
    results = probe_results(value, "expected_payoff", 3)
    expect(as_array(results[1], "expected_payoff(...)", (2,)), [1.0, -1.0],
           "expected_payoff(player 1 bold, player 2 timid)",
           "player 1 raises whenever it may and player 2 folds whenever it may: player 1 raises, player 2 folds on "
           f"every deal, so player 1 wins the ante; {CHANCE_HINT}")
    expect(as_array(results[2], "expected_payoff(...)", (2,)), [-1.0, 1.0],
           "expected_payoff(player 1 timid, player 2 bold)",
           f"player 1 checks (it cannot fold yet), player 2 raises and player 1 folds; {CHANCE_HINT}")


def _best_responses(value):
    values = [as_number(r, "best_response_value(policy, player)")
              for r in probe_results(value, "best_response_value", 4)[:2]]
    if sum(values) < -1e-9:
        raise Wrong("the two best-response values add up to NashConv in a zero-sum game, which is never "
                    "negative")


def _best_response_cases(value):
    results = probe_results(value, "best_response_value", 4)[2:]
    for player, r in enumerate(results):
        expect(as_number(r, "best_response_value(...)"), 1.0, f"best_response_value(timid, {player})",
               "the timid opponent (it folds whenever it may, else checks or calls) folds to every raise, so a "
               "best response wins the ante and never more; the "
               "best responder picks the best action at each of its information sets, the opponent's reach and "
               f"chance's probabilities weighting the histories in it; {CHANCE_HINT}")


def _nash_conv(value):
    for r in probe_results(value, "nash_conv", 3):
        if as_number(r, "nash_conv(policy)") < -1e-9:
            raise Wrong("NashConv is never negative")


def _nash_conv_case(value):
    got = as_number(probe_results(value, "nash_conv", 3)[1], "nash_conv(TIMID)")
    expect(got, 2.0, "nash_conv(timid)", "NashConv of the policy that folds whenever it may adds up what each "
           "player gains by best responding: here 1 for "
           "each player, against expected payoffs that add up to 0")


def _first_decisions():
    """Player 1's first decisions: its infosets before any action (one per private card)."""
    game = _leduc()
    return [I for I, key in enumerate(game.infoset_keys)
            if game.infoset_player[I] == 0 and not key.replace("|", "")[2:]]


def _first_rows(name, iterations, row, why):
    """After `iterations` of the solver, the average at player 1's first decisions is `row`."""
    def test(value):
        policy = as_array(probe_results(value, name, 1)[0], f"{name}({iterations})", _leduc().legal_mask.shape)
        for I in _first_decisions():
            expect(policy[I], row, f"{name}({iterations})[{_leduc().infoset_keys[I]!r}]", why)
    return test


def _averaged(name, iterations, keep, why):
    """After `iterations` of the solver, each legal action at player 1's first decisions keeps at
    least `keep` of its uniform probability, and the average has moved away from uniform."""
    def test(value):
        policy = as_array(probe_results(value, name, 1)[0], f"{name}({iterations})", _leduc().legal_mask.shape)
        game = _leduc()
        rows = _first_decisions()
        legal = game.legal_mask[rows]
        floor = keep / legal.sum(axis=1, keepdims=True)
        if np.any((policy[rows] < floor - 1e-9) & legal):
            raise Wrong(f"after {iterations} iterations the average at player 1's first decisions should give "
                        f"every legal action at least {keep:g} of its uniform probability: {why}")
        if np.allclose(policy[rows][legal], (legal / legal.sum(axis=1, keepdims=True))[legal], atol=1e-9):
            raise Wrong(f"after {iterations} iterations the average at player 1's first decisions is still "
                        "uniform: the second iteration plays regret matching on the first one's regrets, "
                        "which are not all 0")
    return test


CFR_WHY = ("the first iteration plays the uniform policy and the second check/call at a first decision; the average "
           "weights each iteration's policy by the player's own reach (1 there): return the average policy, not "
           "the last iteration's")
CFR_PLUS_WHY = ("the first iteration plays the uniform policy and the second check/call at a first decision; CFR+ "
                "averages iteration t with weight t times the player's own reach: return the average policy, not "
                "the last iteration's")


def _nash_conv_time(value):
    """The CPU time of the call at a policy drawn afresh (what the grader times)."""
    seconds = (value.get("__seconds__") or {}).get("nash_conv") or [None]
    took = seconds[-1]
    if isinstance(took, (int, float)) and took > NASH_CONV_SECONDS:
        raise Wrong(f"one call took {took:.2f} CPU s at a policy it had not seen, over the lab's budget of "
                    f"{NASH_CONV_SECONDS:g} s")


def _policy(v, name):
    game = _leduc()
    p = as_array(v, name, game.legal_mask.shape)
    if np.any(p < -1e-9) or np.any(np.abs(p.sum(axis=1) - 1) > 1e-6):
        raise Wrong(f"every row of `{name}` should be a probability distribution")
    if np.any(np.abs(p[~game.legal_mask]) > 1e-12):
        raise Wrong(f"`{name}` puts probability on an illegal action")


def _policies(value, name, count):
    for r in probe_results(value, name, count):
        _policy(r, f"{name}(...)")


def _regret_table(v, name, player):
    """Keys of the player's infosets, one increment per legal action, their sigma-weighted sum 0."""
    game = _leduc()
    if not isinstance(v, dict) or not v:
        raise Wrong(f"`{name}` should return a non-empty dict {{infoset key: increments}}")
    for key, row in v.items():
        if key not in game.infoset_keys:
            raise Wrong(f"`{name}` returned a key that is not a Leduc infoset: {str(key)[:20]!r}")
        I = game.infoset_index(key)
        if game.infoset_player[I] != player:
            raise Wrong(f"`{name}` updated {key!r}, an infoset of the other player")
        r = as_array(row, f"{name}[{key!r}]", (len(game.legal_actions(I)),))
        sigma = POLICY[I, game.legal_actions(I)]
        if abs(sigma @ r) > 1e-9 * max(1.0, np.abs(r).max()):
            raise Wrong("the increments at an infoset, weighted by the strategy, add up to 0 "
                        f"(sum_a sigma(a) r(a) = 0); those at {key!r} do not")


def _feedback(*items):
    def feedback(value):
        f = FormatChecks(value)
        for label, test in items:
            f.item(label, lambda test=test: test(value))
        return f
    return feedback


def _curves_fall(value):
    table = reported(value, "curves")
    for name in CURVES:
        y = as_array(table[name][1], name)
        if np.any(y < -1e-9):
            raise Wrong(f"`curves[{name!r}]` has a negative NashConv: NashConv is never negative")
    for name in ("CFR", "CFR+"):
        y = as_array(table[name][1], name)
        if not y[-1] < y[0]:
            raise Wrong(f"the {name} curve does not fall: its average policy gets closer to an equilibrium as "
                        "the iterations add up")


def _curves(value):
    table = reported(value, "curves")
    if not isinstance(table, dict):
        raise Wrong("`curves` should be a dict {method: (histories touched, NashConv)}")
    for name in CURVES:
        if name not in table:
            raise Wrong(f"`curves` has no curve named {name!r}")
        pair = table[name]
        if not isinstance(pair, list) or len(pair) != 2:
            raise Wrong(f"`curves[{name!r}]` should be a pair (histories touched, NashConv)")
        x, y = as_array(pair[0], name), as_array(pair[1], name)
        if x.ndim != 1 or x.shape != y.shape or len(x) < 5 or np.any(np.diff(x) <= 0):
            raise Wrong(f"`curves[{name!r}]` needs 5 or more points, in increasing histories touched")


# Monte Carlo CFR's public runs: the first run twice (a seed fixes every sampled episode, so the two
# averages are equal), and once with another seed (other episodes: another average)
MCCFR_RUNS = [("outcome", 3, 0), ("external", 2, 0), ("outcome", 3, 0), ("outcome", 3, 1)]


def _reproducible(value):
    runs = [as_array(r, "mccfr(...)") for r in probe_results(value, "mccfr", len(MCCFR_RUNS))]
    if runs[0].shape != runs[2].shape or not np.array_equal(runs[0], runs[2]):
        raise Wrong("`mccfr('outcome', 3, 0)` returned two different policies: draw every random number from a "
                    "generator made from `seed` in the call (np.random.default_rng(seed)), not from a global one")


def _seeded(value):
    runs = [as_array(r, "mccfr(...)") for r in probe_results(value, "mccfr", len(MCCFR_RUNS))]
    if runs[0].shape == runs[3].shape and np.array_equal(runs[0], runs[3]):
        raise Wrong("`mccfr('outcome', 3, 0)` and `mccfr('outcome', 3, 1)` returned the same policy: the seed "
                    "should decide which episodes are sampled")


POLICY = _leaning()

PARTS = [
    public_part("L15(a)", ["counts"], 2,
                _feedback(("counts holds three whole numbers", _counts),
                          ("the three counts agree with each other and the game", _counts_agree))),
    public_part("L15(b)", ["expected_payoff"], 2,
                _feedback(("expected_payoff gives 2 payoffs adding to 0", _zero_sum),
                          ("(1, -1) and (-1, 1) for bold against timid and back", _payoff_cases)),
                {"expected_payoff": [(POLICY,), (BOLD_VS_TIMID,), (TIMID_VS_BOLD,)]}, OWN_WORK["L15(b)"]),
    public_part("L15(c)", ["best_response_value"], 2,
                _feedback(("best_response_value gives numbers whose sum is not negative", _best_responses),
                          ("1 for each player against the timid policy", _best_response_cases)),
                {"best_response_value": [(POLICY, 0), (POLICY, 1), (TIMID, 0), (TIMID, 1)]}, OWN_WORK["L15(c)"]),
    public_part("L15(d)", ["nash_conv"], 2,
                _feedback(("nash_conv gives a number >= 0", _nash_conv),
                          ("2 for the timid policy", _nash_conv_case),
                          (f"under {NASH_CONV_SECONDS:g} CPU s at a new policy", _nash_conv_time)),
                {"nash_conv": [(POLICY,), (TIMID,), (marker("leduc_policy"),)]}, OWN_WORK["L15(d)"],
                {"nash_conv": (NASH_CONV_SECONDS, 1)}),
    public_part("L15(e)", ["cfr"], 2, _feedback(("cfr returns a policy (936, 3)", lambda v: _policies(v, "cfr", 1)),
                                                ("cfr(2) at the first decisions is (0, 3/4, 1/4)",
                                                 _first_rows("cfr", 2, [0, 3 / 4, 1 / 4], CFR_WHY))),
                {"cfr": [(2,)]}, OWN_WORK["L15(e)"]),
    public_part("L15(f)", ["cfr_plus"], 2,
                _feedback(("cfr_plus returns a policy (936, 3)", lambda v: _policies(v, "cfr_plus", 1)),
                          ("cfr_plus(2) at the first decisions is (0, 5/6, 1/6)",
                           _first_rows("cfr_plus", 2, [0, 5 / 6, 1 / 6], CFR_PLUS_WHY))),
                {"cfr_plus": [(2,)]}, OWN_WORK["L15(f)"]),
    public_part("L15(g)", ["cfr_plus"], 1,
                _feedback(("cfr_plus returns a policy (936, 3)", lambda v: _policies(v, "cfr_plus", 1)),
                          ("cfr_plus(3) averages with linear weights", _averaged("cfr_plus", 3, 1 / 6, CFR_PLUS_WHY))),
                {"cfr_plus": [(3,)]}, OWN_WORK["L15(g)"]),
    public_part("L15(h)", ["outcome_sampling_regrets", "sampled_regret_means"], 2, _feedback(
        ("outcome_sampling_regrets returns increments at the player's infosets",
         lambda v: _regret_table(probe_results(v, "outcome_sampling_regrets", 1)[0], "outcome_sampling_regrets", 0)),
        ("sampled_regret_means returns a (936, 3) array",
         lambda v: as_array(probe_results(v, "sampled_regret_means", 1)[0], "sampled_regret_means(...)",
                            _leduc().legal_mask.shape) is None)),
        {"outcome_sampling_regrets": [(POLICY, 0, STREAM[:16], 0.6)],
         "sampled_regret_means": [(POLICY, 1, [STREAM[:16], STREAM[16:32]])]}, OWN_WORK["L15(h)"]),
    public_part("L15(i)", ["external_sampling_regrets"], 1, _feedback(
        ("external_sampling_regrets returns increments at the player's infosets",
         lambda v: _regret_table(probe_results(v, "external_sampling_regrets", 1)[0], "external_sampling_regrets", 1))),
        {"external_sampling_regrets": [(POLICY, 1, STREAM)]}, OWN_WORK["L15(i)"]),
    public_part("L15(j)", ["mccfr"], 2,
                _feedback(("mccfr returns policies (936, 3)", lambda v: _policies(v, "mccfr", len(MCCFR_RUNS))),
                          ("the same seed gives the same policy", _reproducible),
                          ("another seed samples other episodes", _seeded)),
                {"mccfr": MCCFR_RUNS}, OWN_WORK["L15(j)"]),
    public_part("L15(k)", ["curves"], 1, _feedback(("curves holds the seven methods", _curves),
                                                    ("NashConv >= 0, falling for CFR and CFR+", _curves_fall))),
]
'''
