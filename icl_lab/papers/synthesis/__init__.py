"""The synthesis paper's package: theory, experiments, figures and claims."""
