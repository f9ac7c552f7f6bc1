"""Single-location regression (docs/equations/README.md): population risk, ridge ERM and Bayes-optimal error."""

from ._command import command
from ._models import function_of

population = command(
    "slr population",
    """Population (infinite-data) risk of the best softmax, linear, erf or softplus attention
against the Bayes risk, for the spiked or max single-location regression task (docs/equations/slr_population.md §1-§3:
risk (S7) E = 1 - 2 m_v B + q_v A at the optimal value vector (S8), Bayes risk (S9); Laplace
reduction §7a, (S26)-(S30)). For spiked SLR the linear risk has the closed form
L(L-1)/(L^2 + nu(L-1)), and softmax attains the Bayes risk.

Example: saddle.slr.population(task="spiked", L=3, nu=np.linspace(0.5, 8, 16),
activation=["softmax", "linear"])""")

# From the model registry (tools/cli/models.cpp): equations/slr_replica_curve.hpp ReplicaModel,
# equations/slr_rsb.hpp RsbModel, equations/slr_bayes.hpp BayesModel.
erm = function_of("slr erm")
erm_1rsb = function_of("slr erm-1rsb")
bayes = function_of("slr bayes")

__all__ = ["population", "erm", "erm_1rsb", "bayes"]
