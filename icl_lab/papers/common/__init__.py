"""The common paper's package: theory, experiments, figures and claims."""
