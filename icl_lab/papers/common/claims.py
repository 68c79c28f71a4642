"""Claims of the first chapter (the setup the four papers share)."""
from ...claims import declare

CLAIMS = (
    declare("S1", "window paper, Sec. 3.4, eqs. (7) and (9)",
            r"On the unit sphere, softmax attention with $M = cI$ is the Nadaraya–Watson estimator with "
            r"Gaussian kernel and bandwidth $h = 2/c$.", kind="consistency"),
    declare("S2", "convergence paper, Lemma C.1",
            r"The closed-form gradient of the Q-only model, $(\hat y - y_q)\sum_i a_i y_i (x_i - \bar x) x_q^\top$, "
            r"equals autograd.", kind="consistency"),
    declare("S3", "convergence paper, Sec. 3 (feature-space dynamics)",
            r"The gradient lies in $\mathrm{span}\{v_n v_k^\top\}$, so gradient descent from $Q = 0$ stays in the "
            r"feature span.", kind="consistency"),
    declare("S4", "convergence paper, Thm 3.1 (preview)",
            r"Trained softmax attention concentrates on the demonstrations that share the query's feature "
            r"(own-feature attention above $0.9$ at the longest context).", kind="paper"),
    declare("S5", "this chapter, Sec. 4",
            r"The trained model's held-out loss falls with $N$, to below $5\%$ of the uniform average.",
            kind="finding"),
    declare("S6", "window paper, Thm 3.6 (preview)",
            r"Even the best linear attention stays above trained softmax attention at large $N$.", kind="paper"),
    declare("S7", "this chapter, Exercise 2",
            r"The best linear attention's loss equals $\tfrac12\big(1 - (\mathbb E c)^2/\mathbb E c^2\big)$ with "
            r"$c \sim \mathrm{Bin}(N, p_k)$: it decays like $1/N$.", kind="finding"),
    declare("S8", "this chapter, Exercise 1",
            r"For orthonormal features and noiseless linear labels, minimum-norm least squares is the Bayes "
            r"predictor.", kind="consistency"),
)
