// Regret matching's fixed point as the EFR authors compute it: the minimum-norm least-squares
// solution of [L - I; 1^T] sigma = [0; 1] by Eigen's two-sided Jacobi SVD, clipped to [0, 1].
//
// Built on first use by labkit/efr/eigen.py (no -march flags and no floating-point
// contraction: the rounding must be the baseline x86-64 build's, which is what reproduces the
// paper's numbers). One call handles a batch of infosets.
//
// Layout, for infoset i of B, over the game's A distinct actions:
//   external[i*A + b]           weight of "every action becomes b"          (may be null)
//   internal[(i*A + a)*A + b]   weight of "a becomes b", a != b             (may be null)
//   legal[i*A + a]              1 if a is legal at i
//   out[i*A + a]                the strategy (0 on illegal actions)
#include <Eigen/Dense>

#include <vector>

extern "C" int labkit_eigen_fixed_points(long B, long A, const double* external,
                                         const double* internal, const unsigned char* legal,
                                         double* out) {
  std::vector<long> actions;
  for (long i = 0; i < B; ++i) {
    actions.clear();
    for (long a = 0; a < A; ++a) {
      if (legal[i * A + a]) actions.push_back(a);
    }
    const long n = static_cast<long>(actions.size());
    double* strategy = out + i * A;
    for (long a = 0; a < A; ++a) strategy[a] = 0.0;
    if (n == 0) continue;

    // The weighted sum of the transformations as an n x n column-stochastic matrix (times z):
    // column j says where the mass of action j goes. Weights are added in the authors' order:
    // external ones by target, then internal ones by (source, target).
    double z = 0.0;
    Eigen::VectorXd onto = Eigen::VectorXd::Zero(n);        // external part, by target
    Eigen::MatrixXd moves = Eigen::MatrixXd::Zero(n, n);     // internal part
    bool only_external = true;
    if (external) {
      for (long b = 0; b < n; ++b) {
        const double w = external[i * A + actions[b]];
        z += w;
        onto(b) += w;
      }
    }
    if (internal) {
      for (long a = 0; a < n; ++a) {
        for (long b = 0; b < n; ++b) {
          if (a == b) continue;
          const double w = internal[(i * A + actions[a]) * A + actions[b]];
          z += w;
          if (n == 2) {  // with two actions "a becomes b" is "every action becomes b"
            onto(b) += w;
            continue;
          }
          only_external = false;
          for (long j = 0; j < n; ++j) moves(j == a ? b : j, j) += w;
        }
      }
    }

    Eigen::VectorXd sigma(n);
    if (!(z > 0)) {
      sigma.setConstant(1.0 / static_cast<double>(n));
    } else if (only_external) {
      sigma = onto / z;
    } else {
      Eigen::MatrixXd system = -Eigen::MatrixXd::Identity(n + 1, n);
      system.row(n).setOnes();
      Eigen::MatrixXd chain = moves.colwise() + onto;
      system.topRows(n) += chain / z;
      Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n + 1);
      rhs(n) = 1.0;
      sigma = system.jacobiSvd(Eigen::ComputeThinU | Eigen::ComputeThinV)
                  .solve(rhs)
                  .cwiseMax(0.0)
                  .cwiseMin(1.0);
    }
    for (long b = 0; b < n; ++b) strategy[actions[b]] = sigma(b);
  }
  return 0;
}
