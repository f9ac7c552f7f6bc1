// How the plain iteration x <- F(x) behaves near a fixed point: the spectral radius of the map's
// Jacobian dF/dx there. Below 1 the fixed point attracts the iteration; above 1 it repels it (a
// saddle point of the model that an iteration can still report as converged when it starts on
// it exactly, e.g. the symmetric solution m = 0 past a bifurcation). Nothing here knows a model.
#pragma once
#include "solver/system.hpp"

namespace saddle {

struct MapSpectrum {
  double radius = 0;  // max |eigenvalue| of dF/dx (NaN: the map is not finite around x)
  // A real unit direction (|v|_inf = 1, its largest entry positive) of the eigenvalue of largest
  // modulus: the direction in which a repelling fixed point is left fastest.
  Vec direction;
  bool finite_differences = false;  // the Jacobian came from finite differences
};

// dF/dx at x: the system's map_jacobian when it has one, else central differences with steps
// h_j = 1e-6 max(1, |x_j|). The map is evaluated as given (no projection).
Eigen::MatrixXd map_jacobian_at(const FixedPointSystem& sys, const Vec& x, bool* finite_differences = nullptr);

// The spectrum of dF/dx at x (see MapSpectrum).
MapSpectrum map_spectrum(const FixedPointSystem& sys, const Vec& x);

}  // namespace saddle
