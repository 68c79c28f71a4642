"""Theory: exact formulas and reduced dynamics of the papers' models (one module per paper)."""
