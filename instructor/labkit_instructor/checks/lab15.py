"""Hidden checks of Lab 15, CFR, CFR+, Monte Carlo CFR and exact best responses on Leduc hold'em.

The lab itself (text, templates, worked solutions) is labkit_instructor/exercises/lab15.py.

Every expected value comes from labkit: exact evaluation (`lk.expected_payoffs`,
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

import functools
import threading

import numpy as np

from labkit.grading import fresh
from labkit.grading.checking import cpu_seconds, own_work_gate, recorded
from labkit.grading.public.lab15 import OWN_WORK
from labkit_instructor.checks.sampling import sampled_regrets
from labkit_instructor.checks.base import (Grader, Lazy, Wrong, as_array, as_number, kind_of, part_spec,
                                           probe_results, reported)

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
MCCFR_PROBES = [("outcome", MCCFR_RUNS["outcome"], 4401), ("outcome", MCCFR_RUNS["outcome"], 4402),
                ("external", MCCFR_RUNS["external"], 4403), ("external", MCCFR_RUNS["external"], 4404)]


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


@functools.lru_cache(maxsize=1)
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


@functools.lru_cache(maxsize=None)
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


@functools.lru_cache(maxsize=1)
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


@functools.lru_cache(maxsize=1)
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
@functools.lru_cache(maxsize=None)
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


@functools.lru_cache(maxsize=None)
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


@functools.lru_cache(maxsize=None)
def psro_history(iterations):
    """NashConv of labkit's PSRO mixture (`lk.PSRO(leduc, "nash")`) after 0, 1, ..., iterations."""
    import warnings
    import labkit as lk
    with _psro_lock, warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # repeated best responses
        psro = lk.PSRO(leduc(), meta_solver="nash")
        psro.run(iterations)
    return [v for _, v in psro.nash_conv_history]


@functools.lru_cache(maxsize=None)
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
