"""Exercise 6.1: deviations of each type at an information set, and the regrets of recorded play."""
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
