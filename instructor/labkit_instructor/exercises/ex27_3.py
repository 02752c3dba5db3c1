"""Exercise 27.3: replicator dynamics conserve a divergence; regularization makes it shrink."""
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

$$\dot{\hat D} = -\alpha\,(x - \hat x)^\top(\ln x - \ln\hat x) - \alpha\,(y - \hat y)^\top(\ln y - \ln\hat y)
= -\alpha\bigl[D_{\mathrm{KL}}(x\|\hat x) + D_{\mathrm{KL}}(\hat x\|x) + D_{\mathrm{KL}}(y\|\hat y) + D_{\mathrm{KL}}(\hat y\|y)\bigr] \le 0,$$

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
