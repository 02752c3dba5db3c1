"""Exercise 6.1: deviations of each type at an information set, and the regrets of recorded play.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex6_1.py).

The hidden checks. Chapter 6 (Hindsight rationality) defines the types. The references are labkit's:
the counts come from the regret tables EFR keeps (`labkit.efr.deviation_structure`), tested against
the formulas of the chapter's table, and the regrets from `labkit.hindsight`, which applies every
deviation to the recorded strategies and evaluates it on the tree.
"""
from __future__ import annotations


import numpy as np

from labkit_instructor.checks.base import computed_once, Grader, Lazy, Wrong, as_number, kind_of, part_spec, probe_results
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, setup, written

GAMES_SETUP = setup("""
    leduc = lk.games.load("leduc_poker")
    kuhn = lk.games.load("kuhn_poker")
""")

COUNT_TEMPLATE = '''
TYPES = ("act", "act_in", "cf", "cf_in", "bps", "cfps", "csps", "tips", "bhv")


def count_deviations(key):
    """{type: number of regrets at the Leduc information set `key`}, nine TYPES."""
    ...
'''

COUNT_SOLUTION = '''
TYPES = ("act", "act_in", "cf", "cf_in", "bps", "cfps", "csps", "tips", "bhv")


def predecessors(game, I):
    """[(J, a), ...]: the acting player's decision points before I, first one first,
    each with the action that leads toward I (infosets with a single legal action do
    not count)."""
    path, seq = [], game.infoset_parent_seq[I]
    while seq >= 0:
        J, a = divmod(int(seq), game.num_actions)
        if game.legal_mask[J].sum() >= 2:
            path.append((J, a))
        seq = game.infoset_parent_seq[J]
    return path[::-1]


def count_deviations(key):
    I = leduc.infoset_index(key)
    n = int(leduc.legal_mask[I].sum())
    sizes = [int(leduc.legal_mask[J].sum()) for J, _ in predecessors(leduc, I)]
    d, internal = len(sizes), n * (n - 1)
    return {"act": n, "act_in": internal, "cf": n, "cf_in": internal,
            "bps": (d + 1) * n, "cfps": (d + 1) * internal,
            "csps": n * (d + sum(k - 1 for k in sizes)) + internal,
            "tips": (1 + sum(sizes)) * internal,
            "bhv": int(np.prod(sizes, dtype=int)) * internal}


print(f"{'infoset':14s}", *(f"{t:>6s}" for t in TYPES))
for key in ("Ks|||", "Qh||r|", "Qh|Ks|rrc|cr"):
    counts = count_deviations(key)
    print(f"{key:14s}", *(f"{counts[t]:6d}" for t in TYPES))
'''

REGRET_TEMPLATE = '''
def blind_action_regret(profiles, player):
    """max over the blind action deviations of `player` of the summed gains over the
    rounds; profiles: the recorded joint strategies, a list of (12, 2) arrays, one per
    round."""
    ...


def blind_cf_regret(profiles, player):
    """The same for the blind counterfactual deviations."""
    ...
'''

REGRET_SOLUTION = '''
def deviate(profile, route, I, b):
    """The profile with `route` forced (each (J, a): play a at J) and b played at I."""
    new = np.array(profile, dtype=float)
    for J, a in route + [(I, b)]:
        new[J] = 0.0
        new[J, a] = 1.0
    return new


def regret(profiles, player, counterfactual):
    payoffs = [lk.expected_payoffs(kuhn, p)[player] for p in profiles]
    best = -np.inf
    for I in kuhn.infosets_of(player):
        route = predecessors(kuhn, I) if counterfactual else []   # straight to I
        for b in kuhn.legal_actions(I):
            gain = sum(lk.expected_payoffs(kuhn, deviate(p, route, I, b))[player] - u
                       for p, u in zip(profiles, payoffs))
            best = max(best, gain)
    return best


def blind_action_regret(profiles, player):
    return regret(profiles, player, counterfactual=False)


def blind_cf_regret(profiles, player):
    return regret(profiles, player, counterfactual=True)


# a learner's recorded play: the current strategies of CFR in its first 100 rounds
solver, played = lk.CFR(kuhn), []
for _ in range(100):
    played.append(solver.current_policy().probs)
    solver.step()
for T in (10, 100):
    print(f"T = {T:3d}: blind action regret {blind_action_regret(played[:T], 0):7.3f}, "
          f"blind counterfactual regret {blind_cf_regret(played[:T], 0):7.3f}")
'''

ANSWER_B = r'''
A blind action deviation at $I$ changes play only at $I$, so in a round it gains
$\pi_i(I)\,\bigl(q_I(b) - \sum_a \pi_i(a \mid I)\, q_I(a)\bigr)$: the immediate counterfactual regret
of playing $b$, scaled by the player's own probability of reaching $I$. A blind counterfactual
deviation first plays straight to $I$, so the immediate regret at $I$ counts in full whatever the
player's own reach; it also changes what happens at the earlier decisions, where forcing the route
to $I$ costs or gains the difference between that route and the recorded strategy. So neither type
contains the other: the action regret is small at information sets the player rarely visits, the
counterfactual regret is not, and the rerouting can make a counterfactual deviation worse than
the corresponding action deviation.

CFR minimizes exactly the immediate counterfactual regrets (EFR with the blind counterfactual type
is CFR), which is why its blind counterfactual regret grows sublinearly: divided by $T$ it falls,
as the printed values show between $T = 10$ and $T = 100$.
'''

EXERCISE = Exercise("6.1", "6_1_deviation_regrets", "Counting deviations and measuring regret", (
    md(r"""
        # Exercise 6.1 — Counting deviations and measuring regret

        This exercise belongs to [Hindsight rationality and deviation types](../chapters/06_hindsight_rationality.ipynb).
        First you count, at an information set of Leduc hold'em, the regrets that EFR keeps for each
        deviation type (the chapter's table gives them as formulas in $n$, $d$ and the $n_k$). Then
        you evaluate a learner's recorded strategies in Kuhn poker against two types of deviation,
        by applying each deviation to the strategies and computing its payoffs exactly.
    """),
    how_to("6.1"),
    SETUP,
    GAMES_SETUP,
    md(r"""
        ## (a) Deviations at an information set
        Write `count_deviations(key)` for a Leduc information set: $n$ is its number of legal
        actions, $d$ the number of the acting player's earlier decision points on the way to it
        (information sets with at least two legal actions), and $n_k$ the number of legal actions
        at the $k$-th of them. The tree gives each information set's previous own sequence,
        `leduc.infoset_parent_seq[I]` $= J \cdot 3 + a$ (the infoset $J$ and action $a$ the player
        chose last before $I$, -1 at a first decision). The grader asks about information sets of
        its own, at several depths.
    """),
    answer("6.1(a)", COUNT_TEMPLATE, COUNT_SOLUTION),
    check("6.1(a)"),
    md(r"""
        ## (b) Regret of recorded strategies
        A learner played the joint strategies $\pi^1, \dots, \pi^T$ (a list of `(12, 2)` Kuhn
        arrays). For a deviation $\phi$ of player $i$ its cumulative regret is
        $\sum_t u_i(\phi(\pi^t_i), \pi^t_{-i}) - u_i(\pi^t)$, and the regret for a type is the
        largest over the type's deviations. Write `blind_action_regret(profiles, player)` for the
        *blind action* deviations (at one information set $I$ play a fixed action $b$, follow the
        strategy everywhere else) and `blind_cf_regret(profiles, player)` for the *blind
        counterfactual* deviations (at every earlier decision on the way to $I$ play the action
        that leads to $I$, play $b$ at $I$, then follow the strategy). Both range over all of the
        player's information sets and actions. The grader evaluates them on recordings of its own.

        Explain how the two gains differ and what CFR's play shows.
    """),
    answer("6.1(b)", REGRET_TEMPLATE, REGRET_SOLUTION),
    check("6.1(b)"),
    written("6.1(b)", ANSWER_B, points=1),
))


# ------------------------------------------------------------------ the hidden checks
TYPES = ("act", "act_in", "cf", "cf_in", "bps", "cfps", "csps", "tips", "bhv")
COUNT_PROBES = [("Js||cr|",), ("Jh|Ks|rrc|r",), ("Qs|Kh|cc|rr",), ("Ks|Jh|crc|crr",), ("Kh|Ks|crrc|cr",)]


def game(name):
    import labkit as lk
    return lk.games.load(name)


def reference_counts(key):
    """{type: number of regrets EFR keeps at the Leduc infoset `key`}."""
    from labkit.efr import deviation_structure
    leduc = game("leduc_poker")
    I = leduc.infoset_index(key)
    out = {}
    for name in TYPES:
        structure = deviation_structure(leduc, name)
        out[name] = int(structure.row_active[structure.row_infoset == I].sum())
    return out


def recorded_cfr(rounds):
    """The current strategies CFR plays on Kuhn poker in rounds 1..rounds."""
    import labkit as lk
    solver, played = lk.CFR(game("kuhn_poker")), []
    for _ in range(rounds):
        played.append(solver.current_policy().probs)
        solver.step()
    return played


def recorded_random(rounds, seed):
    legal = game("kuhn_poker").legal_mask
    rng = np.random.default_rng(seed)
    return [w / w.sum(axis=1, keepdims=True) for w in (rng.gamma(0.5, size=legal.shape) + 1e-3 for _ in range(rounds))]


def _recordings():
    return [recorded_cfr(25), recorded_random(15, 61)]


def _regret_probes():
    return [(rec, p) for rec in RECORDINGS for p in (0, 1)]


# computed when 6.1(b) is first graded, not at import (CFR's 25 rounds load labkit's kernels)
RECORDINGS = Lazy(_recordings)
REGRET_PROBES = Lazy(_regret_probes)


@computed_once
def reference_regrets(kind):
    from labkit import hindsight
    return [hindsight.deviation_regret(game("kuhn_poker"), rec, p, kind) for rec, p in REGRET_PROBES]


def _grade_a(value):
    g = Grader(value)

    def types(names):
        def test():
            results = probe_results(value, "count_deviations", len(COUNT_PROBES))
            for (key,), r in zip(COUNT_PROBES, results):
                if not isinstance(r, dict):
                    raise Wrong(f"`count_deviations(key)` should return a dict {{type: count}}, got {kind_of(r)}")
                expected = reference_counts(key)
                for name in names:
                    if name not in r:
                        return f"`count_deviations(key)` has no entry {name!r}"
                    if as_number(r[name], f"count_deviations(key)[{name!r}]") != expected[name]:
                        return (f"your count for {name!r} is wrong at a deeper information set: count the player's "
                                "decisions before it (d) and their numbers of actions (n_k)")
            return None
        return test

    g.item("action and counterfactual types", 1, types(("act", "act_in", "cf", "cf_in")))
    g.item("partial sequence and behavioral types", 1, types(("bps", "cfps", "csps", "tips", "bhv")))
    return g.items


def _grade_b(value):
    g = Grader(value)

    def regret(name, kind, other):
        def test():
            results = probe_results(value, name, len(REGRET_PROBES))
            got = [as_number(r, f"{name}(profiles, player)") for r in results]
            if all(abs(x - y) <= 1e-9 for x, y in zip(got, reference_regrets(kind))):
                return None
            if all(abs(x - y) <= 1e-9 for x, y in zip(got, reference_regrets(other))):
                return ("that is the regret for the other type: a blind action deviation follows the strategy "
                        "everywhere but at I; a blind counterfactual one plays straight to I")
            return ("the regret is the largest, over the type's deviations, of the summed payoff gains over the "
                    "rounds, each round's gain computed with that round's strategies of both players")
        return test

    g.item("blind action deviations", 1, regret("blind_action_regret", "act", "cf"))
    g.item("blind counterfactual deviations", 1, regret("blind_cf_regret", "cf", "act"))
    return g.items


PARTS = [
    part_spec("6.1(a)", ["count_deviations"], _grade_a, 2, {"count_deviations": COUNT_PROBES}),
    part_spec("6.1(b)", ["blind_action_regret", "blind_cf_regret"], _grade_b, 2,
              {"blind_action_regret": REGRET_PROBES, "blind_cf_regret": REGRET_PROBES}),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of exercise 6.1 (deviation counts and regrets): whole numbers for every type,
regrets that cannot be negative when the same strategies are played every round, and the values of
public cases (the grader's infosets and recorded plays are other ones).

At a player's first decision ("Ks|||": call or raise) nothing came before, so every type keeps the
2 swaps of one legal action for the other. The counts at "Qh||cr|" and the two regrets of three
rounds of uniform play are small numbers from labkit's deviation structures and hindsight module
(the course's tests recompute them there).
"""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_number, expect, kind_of, probe_results

TYPES = ("act", "act_in", "cf", "cf_in", "bps", "cfps", "csps", "tips", "bhv")
REPEATED = [np.full((12, 2), 0.5)] * 3
COUNT_KEYS = [("Ks|||",), ("Qh||cr|",)]
COUNTS = [dict.fromkeys(TYPES, 2),
          {"act": 3, "act_in": 6, "cf": 3, "cf_in": 6, "bps": 6, "cfps": 12, "csps": 12, "tips": 18, "bhv": 12}]
UNIFORM_REGRETS = {"blind_action_regret": 0.375, "blind_cf_regret": 0.75}     # three rounds of uniform play


def _count_cases(value):
    for (key,), got, want in zip(COUNT_KEYS, probe_results(value, "count_deviations", len(COUNT_KEYS)),
                                   COUNTS, strict=False):
        for name in TYPES:
            expect(as_number(got[name], name), want[name], f"count_deviations({key!r})[{name!r}]",
                   "count the deviations of that type that end at this information set, one regret each")


def _regret_cases(value):
    for name, want in UNIFORM_REGRETS.items():
        expect(as_number(probe_results(value, name, 1)[0], name), want, f"{name}(three rounds of uniform play, ...)",
               "the regret is the best blind deviation's gain over the rounds played, added up over the rounds")


def _counts(value):
    r = probe_results(value, "count_deviations", len(COUNT_KEYS))[0]
    if not isinstance(r, dict):
        raise Wrong(f"`count_deviations(key)` should return a dict {{type: count}}, got {kind_of(r)}")
    for name in TYPES:
        if name not in r:
            raise Wrong(f"`count_deviations(key)` has no entry {name!r}")
        v = as_number(r[name], f"count_deviations(key)[{name!r}]")
        if v < 1 or not v.is_integer():
            raise Wrong(f"`count_deviations(key)[{name!r}]` should be a positive whole number")


def _regrets(value):
    for name in ("blind_action_regret", "blind_cf_regret"):
        if as_number(probe_results(value, name, 1)[0], f"{name}(profiles, player)") < -1e-9:
            raise Wrong(f"with the same strategies in every round, `{name}` cannot be negative: some action at "
                        "the first decision does at least as well as the strategy's mixture")


PARTS = [
    public_part("6.1(a)", ["count_deviations"], 2,
                lambda value: FormatChecks(value).item("count_deviations gives a whole number per type",
                                                       lambda: _counts(value))
                .item("the counts at two public information sets", lambda: _count_cases(value)),
                {"count_deviations": COUNT_KEYS}),
    public_part("6.1(b)", ["blind_action_regret", "blind_cf_regret"], 2,
                lambda value: FormatChecks(value).item("both regrets are numbers, >= 0 for repeated play",
                                                       lambda: _regrets(value))
                .item("the regrets of three rounds of uniform play", lambda: _regret_cases(value)),
                {"blind_action_regret": [(REPEATED, 0)], "blind_cf_regret": [(REPEATED, 1)]}),
]
'''
