"""Claims of the synthesis chapter: the book's own, across papers."""
from ...claims import declare

CLAIMS = (
    declare("X0", "this chapter, Sec. 2 (one model family)",
            r"Q-only attention with $Q = W^\top W$, the tied kernel model with weight $W$ and the Nadaraya–Watson "
            r"formula agree; softmax predictions are convex combinations of the context labels.",
            kind="consistency"),
    declare("X1", "this chapter, the contrast law; nonlinear chapter, R1",
            r"Across the cosine family, the halfway time of attention concentration scales as $1/C$ (implied by "
            r"the exact $L$–$\eta$ rescaling, so a check of the code, not new evidence).", kind="consistency"),
    declare("X2", "this chapter, the contrast law",
            r"The convergence paper's linear task lies on the nonlinear paper's cosine-family law "
            r"$t_{1/2} \propto C^{-1}$ (same code, same model).", kind="finding"),
)
