"""The one place that says how to install labkit's optional deep-learning extra."""

INSTALL_HINT = 'pip install "labkit-marl[deep]"'
MISSING_MESSAGE = ("labkit.deep needs JAX and optax, which labkit's core does not install; "
                   f"install the extra with: {INSTALL_HINT}  (or: pip install jax optax)")
