"""The book's first chapter, the setup the four papers share: its experiment (:mod:`.experiments`:
trained attention against the context length), figures (:mod:`.figures`) and claims (``claims.toml``);
no theory of its own."""
