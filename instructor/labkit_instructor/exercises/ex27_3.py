"""Exercise 27.3: replicator dynamics conserve a divergence; regularization makes it shrink.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex27_3.py).
"""
from __future__ import annotations


import numpy as np

from labkit_instructor.checks.base import (computed_once, BIASED_RPS, Grader, RPS_EQUILIBRIUM, as_array, close_to,
    kl_divergence, part_spec, probe_results, reported)
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

REPLICATOR_TEMPLATE = '''
from scipy.integrate import solve_ivp

A = lk.games.biased_rock_paper_scissors().A
x_star = y_star = np.array([0.25, 0.5, 0.25])
x0, y0 = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])


def replicator(t, z, A):
    """d/dt of z = (x, y) under the replicator dynamics (the signature scipy's
    solve_ivp wants)."""
    ...


kl_along_trajectory = ...  # D at 20 or more times along a trajectory from (x0, y0)
'''

REPLICATOR_SOLUTION = '''
from scipy.integrate import solve_ivp

A = lk.games.biased_rock_paper_scissors().A
x_star = y_star = np.array([0.25, 0.5, 0.25])
x0, y0 = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])


def replicator(t, z, A):
    m = A.shape[0]
    x, y = z[:m], z[m:]
    u, w = A @ y, -A.T @ x                 # each player's payoff vector
    return np.concatenate([x * (u - x @ u), y * (w - y @ w)])


def kl(p, q):
    return np.sum(p * np.log(p / q), axis=0)


times = np.linspace(0, 30, 301)
trajectory = solve_ivp(
    replicator,
    (0, 30),
    np.concatenate([x0, y0]),
    args=(A,),
    t_eval=times,
    method="DOP853",
    rtol=1e-12,
    atol=1e-12,
)
x_t, y_t = trajectory.y[:3], trajectory.y[3:]
kl_along_trajectory = kl(x_star[:, None], x_t) + kl(y_star[:, None], y_t)
print(f"D from {kl_along_trajectory.min():.8f} to {kl_along_trajectory.max():.8f}")
print("x(t) at t = 0, 10, 20, 30:\\n", np.round(x_t[:, ::100].T, 3))
'''

HEDGE_TEMPLATE = '''
# D at rounds 0, 1, ..., 200 of simultaneous Hedge with step 0.1 from (x0, y0)
hedge_kl = ...
'''

HEDGE_SOLUTION = '''
step, rounds = 0.1, 200
x, y = x0.copy(), y0.copy()
hedge_kl = [kl(x_star, x) + kl(y_star, y)]
for _ in range(rounds):
    # both players update from the previous round's strategies
    x, y = x * np.exp(step * A @ y), y * np.exp(-step * A.T @ x)
    x, y = x / x.sum(), y / y.sum()
    hedge_kl.append(kl(x_star, x) + kl(y_star, y))
hedge_kl = np.array(hedge_kl)
print("D after 0, 50, 100, 150, 200 rounds:", np.round(hedge_kl[::50], 4))
print("D grew in every round:", bool(np.all(np.diff(hedge_kl) > 0)))
'''

REGULARIZED_TEMPLATE = '''
alpha = 0.2
rho = sigma = np.full(3, 1 / 3)  # the magnets

x_hat = ...  # the regularized equilibrium
y_hat = ...
# KL(x_hat || x) + KL(y_hat || y) at 20 or more times along a regularized trajectory
kl_regularized = ...
'''

REGULARIZED_SOLUTION = '''
alpha = 0.2
rho = sigma = np.full(3, 1 / 3)  # the magnets


def regularized_replicator(t, z, A):
    m = A.shape[0]
    x, y = z[:m], z[m:]
    u = A @ y - alpha * (np.log(x) - np.log(rho))
    w = -A.T @ x - alpha * (np.log(y) - np.log(sigma))
    return np.concatenate([x * (u - x @ u), y * (w - y @ w)])


# the rest point: integrate long enough for the divergence to vanish
# (it falls like exp(-alpha t))
settle = solve_ivp(
    regularized_replicator,
    (0, 400),
    np.concatenate([x0, y0]),
    args=(A,),
    method="LSODA",
    rtol=1e-12,
    atol=1e-14,
)
x_hat, y_hat = settle.y[:3, -1], settle.y[3:, -1]
# at the regularized equilibrium each player's regularized payoff is the same
# for all actions
print("regularized payoffs at (x_hat, y_hat):")
print("  player 1:", np.round(A @ y_hat - alpha * np.log(x_hat / rho), 6))
print("  player 2:", np.round(-A.T @ x_hat - alpha * np.log(y_hat / sigma), 6))
print("x_hat =", np.round(x_hat, 4), " y_hat =", np.round(y_hat, 4))

times = np.linspace(0, 40, 201)
path = solve_ivp(
    regularized_replicator,
    (0, 40),
    np.concatenate([x0, y0]),
    args=(A,),
    t_eval=times,
    method="DOP853",
    rtol=1e-12,
    atol=1e-13,
)
kl_regularized = kl(x_hat[:, None], path.y[:3]) + kl(y_hat[:, None], path.y[3:])
print("divergence at t = 0, 10, 20, 30, 40:")
print(np.round(kl_regularized[::50], 6))
print("never increases:", bool(np.all(np.diff(kl_regularized) <= 0)))
'''

PROOF_A = r'''
Along a trajectory, $\frac{d}{dt} D_{\mathrm{KL}}(x^*\|x) = -\sum_i x^*_i \frac{\dot x_i}{x_i}
= -\sum_i x^*_i \bigl((Ay)_i - x^\top A y\bigr) = -x^{*\top} A y + x^\top A y$, using $\sum_i x^*_i = 1$.
In the same way $\frac{d}{dt} D_{\mathrm{KL}}(y^*\|y) = x^\top A y^* - x^\top A y$. Adding,

$$\dot D = x^\top A y^* - x^{*\top} A y .$$

Because $(x^*, y^*)$ is an equilibrium in the interior, each player is indifferent between all of its
actions there: $A y^* = v\mathbf 1$ and $x^{*\top} A = v\mathbf 1^\top$, with $v$ the value. Hence
$x^\top A y^* = v = x^{*\top} A y$ for all strategies $x, y$, and $\dot D = 0$.
'''

ANSWER_B = r'''
$D$ measures how far the current strategies are from the equilibrium, and it never changes: the
trajectory stays on the level set of its starting point, orbiting the equilibrium forever. The
current strategies do not converge (unless they start at the equilibrium), although their time
averages do, as in exercise 27.1.

A discrete step of Hedge is not the flow: it moves along the tangent, and since the level sets of
$D$ curve around the equilibrium, every step lands on a slightly higher level. $D$ grows in every
round, so the current strategies spiral outward toward the boundary of the simplex.
'''

PROOF_C = r'''
Write $u = Ay - \alpha(\ln x - \ln\rho)$ and $w = -A^\top x - \alpha(\ln y - \ln\varsigma)$ for the
regularized payoff vectors and $\hat D = D_{\mathrm{KL}}(\hat x\|x) + D_{\mathrm{KL}}(\hat y\|y)$. As in
(a), $\dot{\hat D} = -(\hat x - x)^\top u - (\hat y - y)^\top w$. At the regularized equilibrium the
regularized payoffs are constant over actions: $A\hat y - \alpha\ln(\hat x/\rho) = c_1\mathbf 1$ and
$-A^\top\hat x - \alpha\ln(\hat y/\varsigma) = c_2\mathbf 1$. Substituting $A\hat y$ and $A^\top \hat x$
from these, the bilinear terms and the constants cancel and what is left is

$$\begin{aligned}
\dot{\hat D} &= -\alpha\,(x - \hat x)^\top(\ln x - \ln\hat x) - \alpha\,(y - \hat y)^\top(\ln y - \ln\hat y)\\
&= -\alpha\bigl[D_{\mathrm{KL}}(x\|\hat x) + D_{\mathrm{KL}}(\hat x\|x)
+ D_{\mathrm{KL}}(y\|\hat y) + D_{\mathrm{KL}}(\hat y\|y)\bigr] \le 0,
\end{aligned}$$

with equality only at $(\hat x, \hat y)$. The entropy term makes the flow strictly contracting, so the
current strategies themselves converge, to the regularized equilibrium.
'''

EXERCISE = Exercise("27.3", "27_3_mirror_descent_orbits", "Why mirror descent orbits and regularization converges", (
    md(r"""
        # Exercise 27.3 — Why mirror descent orbits and regularization converges

        This exercise goes with the chapter [The dynamics of learning in games](../chapters/02_learning_dynamics.ipynb).

        Hedge in continuous time is the replicator dynamics:

        $$\dot x_i = x_i\bigl((Ay)_i - x^\top A y\bigr), \qquad \dot y_j = y_j\bigl(-(A^\top x)_j + x^\top A y\bigr).$$

        Take a zero-sum game whose equilibrium $(x^*, y^*)$ lies in the interior of both simplices -- in
        the code, the biased rock–paper–scissors of exercise 27.2, with $x^* = y^* = (1/4, 1/2, 1/4)$ --
        and the distance $D = D_{\mathrm{KL}}(x^*\,\|\,x) + D_{\mathrm{KL}}(y^*\,\|\,y)$.
    """),
    how_to("27.3"),
    SETUP,
    md(r"""
        ## (a) A conserved quantity
        Prove that $D$ stays constant along every trajectory.
    """),
    written("27.3(a)", PROOF_A, points=2),
    md(r"""
        **In numbers.** Write the right-hand side `replicator(t, z, A)` for `scipy.integrate.solve_ivp`
        ($z$ stacks $x$ and $y$), integrate from $x_0 = (0.5, 0.3, 0.2)$, $y_0 = (0.2, 0.3, 0.5)$ with tight
        tolerances, and store $D$ along the way in `kl_along_trajectory`.
    """),
    answer("27.3(a)", REPLICATOR_TEMPLATE, REPLICATOR_SOLUTION),
    check("27.3(a)"),
    md(r"""
        ## (b) What it means, and what a discrete step does
        What does (a) say about the current strategies? What happens to $D$ under a discrete Hedge
        step? Store in `hedge_kl` the values of $D$ over 200 rounds of simultaneous Hedge,
        $x_{t+1} \propto x_t e^{\eta A y_t}$, $y_{t+1} \propto y_t e^{-\eta A^\top x_t}$, with $\eta = 0.1$,
        from $(x_0, y_0)$ (201 values, round 0 included).
    """),
    written("27.3(b)", ANSWER_B, points=1),
    answer("27.3(b)", HEDGE_TEMPLATE, HEDGE_SOLUTION),
    check("27.3(b)"),
    md(r"""
        ## (c) Regularization
        Add an entropy term that pulls each player toward a magnet, $\rho$ and $\varsigma$: the payoff
        vectors become $u = Ay - \alpha(\ln x - \ln\rho)$ for player 1 and $w = -A^\top x - \alpha(\ln y - \ln\varsigma)$
        for player 2, and the replicator dynamics use $u$ and $w$ in place of $Ay$ and $-A^\top x$. Prove that the divergence to the
        regularized equilibrium $(\hat x, \hat y)$ decreases along trajectories.

        In code, with $\alpha = 0.2$ and uniform magnets: find $(\hat x, \hat y)$ (`x_hat`, `y_hat`) and
        store $D_{\mathrm{KL}}(\hat x\|x) + D_{\mathrm{KL}}(\hat y\|y)$ along a regularized trajectory from
        $(x_0, y_0)$ in `kl_regularized`.
    """),
    written("27.3(c)", PROOF_C, points=2),
    answer("27.3(c)", REGULARIZED_TEMPLATE, REGULARIZED_SOLUTION),
    check("27.3(c)"),
))


# ------------------------------------------------------------------ the hidden checks
X0, Y0 = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
HEDGE_STEP, HEDGE_ROUNDS = 0.1, 200


ALPHA = 0.2


def _replicator(z, A):
    m = A.shape[0]
    x, y = z[:m], z[m:]
    u, w = A @ y, -A.T @ x
    return np.concatenate([x * (u - x @ u), y * (w - y @ w)])


def _simplex_points(seed, count):
    rng = np.random.default_rng(seed)
    return [np.concatenate([rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))]) for _ in range(count)]


REPLICATOR_PROBES = [(0.0, z, BIASED_RPS) for z in _simplex_points(2703, 3)]


def _hedge_kl():
    x, y = X0.copy(), Y0.copy()
    out = [kl_divergence(RPS_EQUILIBRIUM, x) + kl_divergence(RPS_EQUILIBRIUM, y)]
    for _ in range(HEDGE_ROUNDS):
        x, y = x * np.exp(HEDGE_STEP * BIASED_RPS @ y), y * np.exp(-HEDGE_STEP * BIASED_RPS.T @ x)
        x, y = x / x.sum(), y / y.sum()
        out.append(kl_divergence(RPS_EQUILIBRIUM, x) + kl_divergence(RPS_EQUILIBRIUM, y))
    return np.array(out)


@computed_once
def regularized_equilibrium(alpha=ALPHA):
    """(x_hat, y_hat) of the biased RPS with entropy regularization toward uniform magnets,
    found as the rest point of the regularized replicator dynamics in logit coordinates."""
    from scipy.integrate import solve_ivp
    A, m = BIASED_RPS, 3

    def rhs(_, s):
        x, y = np.exp(s[:m] - s[:m].max()), np.exp(s[m:] - s[m:].max())
        x, y = x / x.sum(), y / y.sum()
        return np.concatenate([A @ y - alpha * np.log(x * m), -A.T @ x - alpha * np.log(y * m)])

    sol = solve_ivp(rhs, (0, 400), np.zeros(2 * m), rtol=1e-11, atol=1e-12, method="LSODA")
    s = sol.y[:, -1]
    x, y = np.exp(s[:m] - s[:m].max()), np.exp(s[m:] - s[m:].max())
    return x / x.sum(), y / y.sum()


def _grade_27_3_a(value):
    g = Grader(value)

    def rhs():
        results = probe_results(value, "replicator", len(REPLICATOR_PROBES))
        for r, (_, z, A) in zip(results, REPLICATOR_PROBES):
            if not close_to(as_array(r, "replicator(t, z, A)", (6,)), _replicator(z, A), 1e-8):
                return ("`replicator(t, z, A)` differs from the dynamics at a test point; z stacks "
                        "x then y, and player 2's payoff vector is -A^T x")
        return None

    def constant():
        d = as_array(reported(value, "kl_along_trajectory"), "kl_along_trajectory")
        if d.ndim != 1 or len(d) < 20:
            return "report D at 20 or more times along the trajectory"
        if d.min() < 1e-3:
            return "start the trajectory away from the equilibrium"
        if (d.max() - d.min()) / d.mean() > 1e-5:
            return ("D varies along your trajectory: tighten the integrator's tolerances "
                    "(rtol, atol) or check the dynamics")
        return None

    g.item("replicator dynamics", 1, rhs)
    g.item("D constant along a trajectory", 1, constant)
    return g.items


def _grade_27_3_b(value):
    g = Grader(value)

    def hedge():
        d = as_array(reported(value, "hedge_kl"), "hedge_kl", (HEDGE_ROUNDS + 1,))
        if not np.allclose(d, _hedge_kl(), rtol=1e-6, atol=1e-9):
            return ("your D after the Hedge steps differs from the expected one: both players update "
                    "simultaneously from the previous round's strategies, with step 0.1")
        return None

    g.item("D under discrete Hedge", 1, hedge)
    return g.items


def _grade_27_3_c(value):
    g = Grader(value)
    x_hat, y_hat = regularized_equilibrium()

    def equilibrium():
        x = as_array(reported(value, "x_hat"), "x_hat", (3,))
        y = as_array(reported(value, "y_hat"), "y_hat", (3,))
        if not (close_to(x, x_hat, 1e-5) and close_to(y, y_hat, 1e-5)):
            return ("at the regularized equilibrium each player's regularized payoff vector is constant "
                    "over its actions: x_hat is proportional to rho * exp(A y_hat / alpha)")
        return None

    def decreasing():
        d = as_array(reported(value, "kl_regularized"), "kl_regularized")
        if d.ndim != 1 or len(d) < 20:
            return "report the divergence at 20 or more times along the trajectory"
        if np.any(np.diff(d) > 1e-9):
            return "the divergence to (x_hat, y_hat) must never increase along the regularized trajectory"
        if not d[-1] < 0.1 * d[0]:
            return "integrate longer: the divergence should fall below a tenth of its start"
        return None

    g.item("regularized equilibrium", 1, equilibrium)
    g.item("divergence decreases", 1, decreasing)
    return g.items


PARTS = [
    part_spec("27.3(a)", ["replicator", "kl_along_trajectory"], _grade_27_3_a, 2,
              {"replicator": REPLICATOR_PROBES}),
    part_spec("27.3(b)", ["hedge_kl"], _grade_27_3_b, 1),
    part_spec("27.3(c)", ["x_hat", "y_hat", "kl_regularized"], _grade_27_3_c, 2),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of exercise 27.3 (mirror descent orbits): the dynamics stay on the simplex, their
value at a point of plain rock-paper-scissors worked out by hand (the grader probes the biased
game), and the shape of the three series of divergences the exercise is about.

Plain rock-paper-scissors A = [[0, 1, -1], [-1, 0, 1], [1, -1, 0]] at x = (0.6, 0.3, 0.1),
y = (0.2, 0.2, 0.6): u = A y = (-0.4, 0.4, 0), x.u = -0.12, dx = x (u - x.u) = (-0.168, 0.156, 0.012);
w = -A^T x = (0.2, -0.5, 0.3), y.w = 0.12, dy = y (w - y.w) = (0.016, -0.124, 0.108).
"""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, distribution, expect, probe_results, reported, series

GAME = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
POINT = np.array([0.6, 0.3, 0.1, 0.2, 0.2, 0.6])
HEDGE_ROUNDS = 200
VELOCITY = [-0.168, 0.156, 0.012, 0.016, -0.124, 0.108]        # worked out in the docstring


def _velocity(value):
    dz = as_array(probe_results(value, "replicator", 1)[0], "replicator(t, z, A)", (6,))
    expect(dz, VELOCITY, "replicator(0, (0.6, 0.3, 0.1, 0.2, 0.2, 0.6), rock-paper-scissors)",
           "dx_i = x_i ((A y)_i - x.A y) for player 1 and dy_j = y_j ((-A^T x)_j - y.(-A^T x)) for player 2, whose "
           "payoffs are the negatives of player 1's")


def _conserved(value):
    d = as_array(reported(value, "kl_along_trajectory"), "kl_along_trajectory")
    if np.ptp(d) > 1e-3 * max(abs(d.mean()), 1e-12):
        raise Wrong("along an exact orbit of the replicator dynamics in a zero-sum game with an interior "
                    "equilibrium, the divergence from the equilibrium stays constant; yours varies by "
                    f"{np.ptp(d):.2g}: integrate with tight tolerances, from the equilibrium to the trajectory")


def _grows(value):
    d = as_array(reported(value, "hedge_kl"), "hedge_kl")
    if not d[-1] > d[0]:
        raise Wrong("simultaneous Hedge steps in a zero-sum game move away from the interior equilibrium: the "
                    "divergence should end above where it started")


def _settles(value):
    d = as_array(reported(value, "kl_regularized"), "kl_regularized")
    if not d[-1] < d[0]:
        raise Wrong("the regularized dynamics converge to their rest point: the divergence from it should end "
                    "below where it started")


def _tangent(value):
    dz = as_array(probe_results(value, "replicator", 1)[0], "replicator(t, z, A)", (6,))
    if abs(dz[:3].sum()) > 1e-8 or abs(dz[3:].sum()) > 1e-8:
        raise Wrong("the replicator dynamics keep each player on the simplex: the entries of dx (and of dy) "
                    "must add up to 0")


def _length(value, name, n):
    if len(as_array(reported(value, name), name)) != n:
        raise Wrong(f"`{name}` should hold {n} divergences: the start and one after each of the rounds")


def _feedback_a(value):
    f = FormatChecks(value)
    f.item("replicator(t, z, A) returns 6 numbers that keep z on the simplex", lambda: _tangent(value))
    f.item("replicator at a point of rock-paper-scissors", lambda: _velocity(value))
    f.item("kl_along_trajectory is a series of 20+ divergences", lambda: series(value, "kl_along_trajectory"))
    f.item("kl_along_trajectory stays constant", lambda: _conserved(value))
    return f


def _feedback_b(value):
    f = FormatChecks(value)
    f.item(f"hedge_kl has {HEDGE_ROUNDS + 1} divergences >= 0",
           lambda: series(value, "hedge_kl", HEDGE_ROUNDS + 1)
           or _length(value, "hedge_kl", HEDGE_ROUNDS + 1))
    f.item("hedge_kl ends above its start", lambda: _grows(value))
    return f


def _feedback_c(value):
    f = FormatChecks(value)
    f.item("x_hat and y_hat are distributions",
           lambda: distribution(value, "x_hat", 3) or distribution(value, "y_hat", 3))
    f.item("kl_regularized is a series of 20+ divergences", lambda: series(value, "kl_regularized"))
    f.item("kl_regularized ends below its start", lambda: _settles(value))
    return f


PARTS = [
    public_part("27.3(a)", ["replicator", "kl_along_trajectory"], 2, _feedback_a,
                {"replicator": [(0.0, POINT, GAME)]}),
    public_part("27.3(b)", ["hedge_kl"], 1, _feedback_b),
    public_part("27.3(c)", ["x_hat", "y_hat", "kl_regularized"], 2, _feedback_c),
]
'''
