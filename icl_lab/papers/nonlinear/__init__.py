"""Li, Duan, Liang, *Provable in-context learning of nonlinear regression with transformers*: theory
(:mod:`.theory`: the reduced Q-only dynamics, attention maps, Lemma 2, the phase times), the cosine and
polynomial task laws and the Sec. 6 setting (:mod:`.tasks`), the theory-model experiments
(:mod:`.experiments`) and the practical transformer of Figs. 1-4 (:mod:`.experiments_block`), figures
(:mod:`.figures`) and claims (``claims.toml``)."""
