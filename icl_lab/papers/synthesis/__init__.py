"""The synthesis chapter: its cross-paper experiment (:mod:`.experiments`), the Nadaraya–Watson formula
written out by hand (:mod:`.theory`), what decides its claims (:mod:`.checks`), figures (:mod:`.figures`)
and claims (``claims.toml``)."""
