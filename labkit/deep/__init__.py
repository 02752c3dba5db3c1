"""labkit.deep: multi-agent RL with neural networks, measured exactly.

Every learner here trains JAX networks (plain multilayer perceptrons, optax optimizers, CPU) on
labkit's games, and every network converts to a `labkit.TabularPolicy` by evaluating it at all
information sets of the game (`network_policy`), so `labkit.nash_conv` measures it exactly.

    import labkit as lk
    from labkit import deep
    solver = deep.DeepCFR("leduc_poker", seed=0)
    solver.run(50)
    lk.nash_conv(solver.game, solver.average_policy())

Zero-sum learners: `DeepCFR` (Brown et al., 2019), `NFSP` (Heinrich and Silver, 2016) and
`NeuralMMD` (R-NaD's regularized dynamics, Perolat et al., 2021; Sokota et al., 2023).
Cooperative learners trained by temporal differences: `IndependentQ`, `VDN`, `QMIX` and the
centralized critics `COMA` (joint action values) and `MAPPO` (shared-parameter PPO with a state
value), on the climbing game and on the messenger game (`teams`).

JAX is an optional dependency; ``import labkit`` never imports it, and importing this package
without it raises an ImportError that says how to install the extra.
"""
from labkit.deep._install import INSTALL_HINT, MISSING_MESSAGE

try:
    import jax  # noqa: F401
    import optax  # noqa: F401
except ImportError as error:                     # pragma: no cover - exercised in a subprocess test
    raise ImportError(MISSING_MESSAGE) from error

import jax as _jax

# float64 would double the cost for nothing; integer seeds give bit-identical runs on one machine
_jax.config.update("jax_enable_x64", False)

from labkit.deep.features import InfosetFeatures, infoset_features, ENCODINGS  # noqa: E402
from labkit.deep.networks import MLP, network_policy, policy_from_outputs, OUTPUT_KINDS  # noqa: E402
from labkit.deep.deep_cfr import DeepCFR, DeepCFRConfig  # noqa: E402
from labkit.deep.nfsp import NFSP, NFSPConfig  # noqa: E402
from labkit.deep.rnad import NeuralMMD, NeuralMMDConfig  # noqa: E402
from labkit.deep.team_learner import TeamConfig  # noqa: E402
from labkit.deep.iql import IndependentQ  # noqa: E402
from labkit.deep.vdn import VDN  # noqa: E402
from labkit.deep.qmix import QMIX  # noqa: E402
from labkit.deep.coma import COMA  # noqa: E402
from labkit.deep.mappo import MAPPO  # noqa: E402
from labkit.deep import teams  # noqa: E402

__all__ = ["INSTALL_HINT", "MISSING_MESSAGE", "InfosetFeatures", "infoset_features", "ENCODINGS",
           "MLP", "network_policy", "policy_from_outputs", "OUTPUT_KINDS", "DeepCFR", "DeepCFRConfig", "NFSP",
           "NFSPConfig", "NeuralMMD", "NeuralMMDConfig", "TeamConfig", "IndependentQ", "VDN", "QMIX", "COMA", "MAPPO",
           "teams"]
