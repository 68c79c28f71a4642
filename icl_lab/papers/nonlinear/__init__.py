"""The nonlinear paper's package: theory, experiments, figures and claims."""
