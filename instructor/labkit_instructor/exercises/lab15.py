"""Lab 15: CFR, CFR+, Monte Carlo CFR and exact best responses on Leduc hold'em, written by the student.

The companion reading is chapters/09_lab15_leduc.ipynb (what to expect, the reference figure and
table); the hidden checks are labkit_instructor/checks/lab15.py.
"""
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
decision_edge = chosen_at >= 0


def edge_probabilities(policy):
    """(H,) probability of the move into each history."""
    edge = leduc.chance_prob.copy()
    chosen = np.asarray(policy)[chosen_at[decision_edge], action[decision_edge]]
    edge[decision_edge] = chosen
    return edge


def reach_by_owner(policy):
    """(3, H): player 1's, player 2's and chance's contributions to reaching each
    history."""
    F = np.ones((3, H))
    F[mover[1:], np.arange(1, H)] = edge_probabilities(policy)[1:]
    for lv in levels[1:]:                      # top-down: a level after its parents
        F[:, lv] *= F[:, parent[lv]]
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
def history_values(policy):
    """(H, 2) expected payoffs from every history on, bottom-up."""
    edge = edge_probabilities(policy)
    V = returns.copy()
    for lv in reversed(levels[1:]):
        c = np.arange(lv.start, lv.stop)
        np.add.at(V, parent[c], edge[c, None] * V[c])
    return V


decisions = np.flatnonzero(decision_edge)           # the edges chosen by a player


def counterfactual_values(policy):
    """q (936, 3): q(I, a) = sum over h in I of pi_{-i}(h) v_i(h a);
    own (936,): pi_i(I)."""
    F, V = reach_by_owner(policy), history_values(policy)
    i, h = mover[decisions], parent[decisions]
    q = np.zeros(legal.shape)
    np.add.at(q, (chosen_at[decisions], action[decisions]),
              F[1 - i, h] * F[2, h] * V[decisions, i])
    own = np.zeros(len(legal))
    own[chosen_at[decisions]] = F[i, h]
    return q, own


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
keys = leduc.infoset_keys


def pick(probs, u):
    """The first k whose cumulative probability exceeds u."""
    return min(int(np.searchsorted(np.cumsum(probs), u, side="right")), len(probs) - 1)


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
streams = [rng.random(12) for _ in range(20_000)]
samples = np.array([dense(outcome_sampling_regrets(policy, 0, u)) for u in streams])
direction = exact / np.linalg.norm(exact)
along = (samples * direction).sum(axis=(1, 2))
z = (along.mean() - (exact * direction).sum()) / (along.std() / np.sqrt(len(along)))
print(f"mean of 20,000 estimates along the exact regrets: {z:+.2f} standard errors off")
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
        positive = np.maximum(regrets.get(I, np.zeros(len(legal_actions[I]))), 0.0)
        total = positive.sum()
        if total > 0:
            return positive / total
        return np.full(len(positive), 1 / len(positive))

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


for sampling, T in (("outcome", 5000), ("external", 1000)):
    print(f"{sampling} sampling, NashConv after {T:,} iterations:",
          round(nash_conv(mccfr(sampling, T, 0)), 3))
'''

# ------------------------------------------------------------------ 5. the comparison
CURVES_TEMPLATE = '''
curves = {}     # method -> (histories touched, NashConv), histories increasing
'''

CURVES_SOLUTION = '''
import warnings

grid = np.unique(np.round(np.logspace(0, 3, 13)).astype(int))       # 1 ... 1,000


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
for sampling, T in (("outcome", 20_000), ("external", 5_000)):
    marks = np.unique(np.round(np.logspace(1, np.log10(T), 12)).astype(int))
    _, record = mccfr_run(sampling, T, 0, checkpoints=set(marks))
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
