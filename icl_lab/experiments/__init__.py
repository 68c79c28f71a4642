"""One module per chapter: experiment configurations per scale and run functions returning results.

Notebooks call these; they hold no training loops of their own."""
