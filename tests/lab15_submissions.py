"""Lab 15 submissions that the grader must see through: wrappers around labkit's own solvers, speed
bought before the timed call, and the honest worked solution they are measured against.

Each constant is the source of one answer cell; `notebook(answers)` puts them into the worked
solution (unexecuted), so that the parts not replaced stay the honest ones.
"""
from _grading_support import EXERCISES

LAB = "L15"

# ------------------------------------------------------------------ one-line wrappers of labkit
WRAPPERS = {
    "L15(b)": '''
def expected_payoff(policy):
    return lk.expected_payoffs(leduc, policy)
''',
    "L15(c)": '''
import labkit.evaluate


def best_response_value(policy, player):
    return labkit.evaluate.best_response(leduc, policy, player).value
''',
    "L15(d)": '''
def nash_conv(policy):
    return getattr(lk, "nash" + "_conv")(leduc, policy)
''',
    "L15(e)": '''
def cfr(iterations):
    solver = lk.CFR(leduc)
    solver.run(iterations)
    return solver.average_policy().probs
''',
    "L15(f)": '''
import importlib


def cfr_plus(iterations):
    solver = importlib.import_module("labkit.cfr").CFRPlus(leduc)
    solver.run(iterations)
    return solver.average_policy().probs
''',
    "L15(g)": "average_1000 = cfr_plus(1000)",
    "L15(h)": '''
import importlib
mccfr_module = importlib.import_module("lab" + "kit.mccfr")


def outcome_sampling_regrets(policy, player, uniforms, exploration=0.6):
    with lk.kernels.using("numpy"):
        solver = mccfr_module.MCCFR(leduc, sampling="outcome", seed=0, exploration=exploration)
    for I, actions in enumerate(solver.flat.legal_actions):
        solver.regrets[I] = [float(x) for x in np.asarray(policy)[I, actions]]
    solver._sigma = [None] * leduc.num_infosets
    solver._draw = iter(uniforms).__next__
    r = solver.sampled_regrets(player)
    return {leduc.infoset_keys[I]: r[I, leduc.legal_actions(I)] for I in range(leduc.num_infosets)
            if leduc.infoset_player[I] == player and np.any(r[I] != 0)}


def sampled_regret_means(policy, player, streams):
    q = lk.counterfactual_values(leduc, policy)
    r = (q - (policy * q).sum(axis=1, keepdims=True)) * leduc.legal_mask
    r[leduc.infoset_player != player] = 0.0
    return r
''',
    "L15(i)": '''
def external_sampling_regrets(policy, player, uniforms):
    with lk.kernels.using("numpy"):
        solver = lk.MCCFR(leduc, sampling="external", seed=0)
    for I, actions in enumerate(solver.flat.legal_actions):
        solver.regrets[I] = [float(x) for x in np.asarray(policy)[I, actions]]
    solver._sigma = [None] * leduc.num_infosets
    solver._draw = iter(uniforms).__next__
    r = solver.sampled_regrets(player)
    return {leduc.infoset_keys[I]: r[I, leduc.legal_actions(I)] for I in range(leduc.num_infosets)
            if leduc.infoset_player[I] == player and np.any(r[I] != 0)}
''',
    "L15(j)": '''
def mccfr(sampling, iterations, seed):
    solver = lk.MCCFR(leduc, sampling=sampling, seed=seed)
    solver.run(iterations)
    return solver.average_policy().probs
''',
}
WRAPPED_PARTS = sorted(WRAPPERS)

# ------------------------------------------------------------------ speed bought before the call
MEMOISED_SLOW_NASH_CONV = '''
import hashlib
import time

_seen = {}


def nash_conv(policy):
    """3 CPU seconds the first time a policy is seen, nothing the second time."""
    policy = np.asarray(policy)
    key = hashlib.sha256(policy.tobytes()).hexdigest()
    if key not in _seen:
        until = time.process_time() + 3.0
        while time.process_time() < until:
            pass
        on_policy = expected_payoff(policy)
        _seen[key] = sum(best_response_value(policy, p) - on_policy[p] for p in (0, 1))
    return _seen[key]
'''

# (a) starts a thread that runs the worked CFR+ for 1,000 iterations as soon as its functions
# exist; (g) waits for it, so the check's call only hands over a result computed before it
BACKGROUND_THREAD_START = '''
import threading
import time

precomputed = {}


def _precompute():
    while "cfr_plus_averages" not in globals():
        time.sleep(0.05)
    for average in globals()["cfr_plus_averages"](1000):
        pass
    precomputed[1000] = average


worker = threading.Thread(target=_precompute, daemon=True)
worker.start()
'''

BACKGROUND_THREAD_USE = '''
worker.join()
_own_cfr_plus = cfr_plus


def cfr_plus(iterations):
    if iterations in precomputed:
        return precomputed[iterations]
    return _own_cfr_plus(iterations)
'''


def notebook(answers):
    """The worked Lab 15 (unexecuted) with some answer cells replaced: answers = {slot: source};
    a source under the key ``slot + " +"`` is added after the worked answer of that slot."""
    nb = EXERCISES[LAB].notebook(solution=True)
    for cell in nb.cells:
        meta = cell.metadata.get("labkit", {})
        slot = meta.get("slot")
        if meta.get("role") != "answer":
            continue
        if slot in answers:
            cell.source = answers[slot]
        if slot + " +" in answers:
            cell.source = cell.source + "\n\n" + answers[slot + " +"]
    return nb


def library_wrappers():
    return notebook(WRAPPERS)


def faked_timing():
    # (k) left out: its curves would call the slow NashConv a hundred times
    return notebook({"L15(a) +": BACKGROUND_THREAD_START, "L15(d)": MEMOISED_SLOW_NASH_CONV,
                     "L15(g)": BACKGROUND_THREAD_USE, "L15(k)": "curves = {}"})


def honest():
    return notebook({})
