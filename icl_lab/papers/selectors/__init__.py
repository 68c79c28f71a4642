"""The selectors paper's package: theory, experiments, figures and claims."""
