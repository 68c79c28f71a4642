"""The book's first chapter, the setup the four papers share: its experiment (:mod:`.experiments`:
trained attention against the context length), its one formula (:mod:`.theory`: the Q-only gradient in
closed form), figures (:mod:`.figures`) and claims (``claims.toml``)."""
