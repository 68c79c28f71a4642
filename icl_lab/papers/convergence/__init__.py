"""Reduced feature-space population dynamics of the convergence paper (Huang, Cheng, Liang).

* :mod:`.population` — the count law (exact enumeration, Monte Carlo, mean field, empirical), the
  population gradient G = -V grad_Q L V^T (alpha_k, beta_{k,n}), losses L_k, L_k^low, GD on S;
* :mod:`.reduced` — symmetric 2-3 variable reductions of one query column, discrete GD and an
  adaptive gradient-flow solver for wide K sweeps;
* :mod:`.phases` — the paper's phase boundaries T_1..T_4, mechanistic markers, convergence times.
"""
from .phases import convergence_time, last_holding, phase_times, value_at, window
from .population import (CountLaw, Trajectory, feature_attention, feature_losses, gradient,
                         initial_gradient_mean_field, loss_floor, population_gd, total_loss)
from .reduced import ColumnTrajectory, SymmetricColumn

__all__ = ["CountLaw", "Trajectory", "feature_attention", "feature_losses", "gradient", "initial_gradient_mean_field",
           "loss_floor", "population_gd", "total_loss", "ColumnTrajectory", "SymmetricColumn", "convergence_time",
           "last_holding", "phase_times", "value_at", "window"]
