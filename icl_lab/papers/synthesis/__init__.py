"""The synthesis chapter: its cross-paper experiment (:mod:`.experiments`), figures (:mod:`.figures`) and
claims (``claims.toml``); no theory of its own."""
