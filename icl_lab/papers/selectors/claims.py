"""The selectors paper's claims (H. Li, M. Wang et al., *Transformers as Multi-Task Feature
Selectors*), checked in the chapter's two notebooks: ``part="mechanism"`` (how the trained model
selects features, Fig. 1, Props. 1-2, out-of-domain generalisation) and ``part="sample_complexity"``
(the iteration count of Thm 1, prompt length, number of tasks).

Kinds: ``paper`` (a statement of the paper), ``consistency`` (holds by construction or checks the
library's own code), ``finding`` (the book's own result beyond the paper)."""
from ...claims import declare
from .theory import NOISE, THM1, WIDTH

I, II = "mechanism", "sample_complexity"
# Theorem 1's conditions (and those its proof adds), read with constant 1: see theory.theorem1_conditions.
# Props. 1-2 and Lemmas 3-7 are steps of Theorem 1's proof and share its conditions.
LEMMA7 = (WIDTH, NOISE)

CLAIMS = (
    # ---------------------------------------------------------------- Part I: the mechanism
    declare("M1", "App. B, eqs. (72), (82), (121), (131)",
            r"The closed-form gradients of the hinge loss through the attention–MLP model (with the indicator "
            r"$\mathbb 1[yF < 1]$ the paper omits) equal automatic differentiation", kind="consistency", part=I),
    declare("M2", "App. B, eqs. (108), (113)", r"The label columns of $W_Q$ receive exactly zero gradient", kind="consistency", part=I),
    declare("M3", "eq. (83)", r"At initialisation the attention scores are $\delta^2 x_s^\top x_{l+1}$", kind="consistency", part=I),
    declare("M4", "Prop. 1 eq. (7), Fig. 1(a)",
            r"$\lVert W_Q\mu_j\rVert$ and $\lVert W_K\mu_j\rVert$ grow from $\delta\beta$ to at least "
            r"$\Theta(\sqrt{\log M})$", hypotheses=THM1, part=I),
    declare("M5", "Prop. 1 eq. (8), Fig. 1(a)",
            r"$\lVert W_Q\nu_k\rVert$ and $\lVert W_K\nu_k\rVert$ stay $\Theta(1)$, close to initialisation", hypotheses=THM1, part=I),
    declare("M6", "Prop. 2 eq. (10), Fig. 1(b)",
            r"For a constant fraction of the neurons the MLP reads mainly the label part of the attention output",
            hypotheses=THM1, part=I),
    declare("M7", "Prop. 2, second sentence", r"For the other neurons $\lVert W_{O(i)}\,\mathrm{sa}\rVert \le O(\xi)$",
            hypotheses=THM1, part=I),
    declare("M8", "Prop. 1 eq. (9)", r"The attention mass on $\mathcal N_*$ tends to $1 - \Theta(1/M^C)$", hypotheses=THM1, part=I),
    declare("M9", "Prop. 1 eq. (9)", r"…at a sublinear rate $O(1/T)$", hypotheses=THM1, part=I),
    declare("M14", "Lemma 4, eqs. (95), (104)",
            r"The cross terms $\mu_l^\top W_K^\top W_Q\mu_j$ ($l \ne j$) are smaller than the diagonal ones by a "
            r"factor $1/M_1$", hypotheses=THM1, part=I),
    declare("M15", "App. B, eqs. (109)–(110) and after (121)",
            r"Only the feature embeddings matter for the attention", part=I),
    declare("M10", "proof of Thm 1, eqs. (44)–(47)",
            r"$\gamma_t$ stays on a plateau and then collapses to $\Theta(1/M)$ (the recursion (46))", part=I),
    declare("M11", "Thm 1 (zero in-domain error), all-pairs task set",
            r"After enough iterations the model has (near) zero in-domain error", hypotheses=THM1, part=I),
    declare("M12", "Thm 1 with the $M_1$ required tasks (cyclic set)",
            r"Training on the minimal evenly covering task set reaches zero in-domain error", hypotheses=THM1, part=I),
    declare("M13", "Lemma 7 eq. (36)",
            r"At initialisation $|\mathcal W(0)|, |\mathcal U(0)| \ge \frac{m}{16}(1 - \epsilon_m - \tau M_1)$",
            hypotheses=LEMMA7, part=I),
    declare("M16", "Lemma 5, eqs. (26)–(31)",
            r"The $W_V$ update on a $+q$ token is a combination of $W_O$ rows: positive on $\mathcal W(t)$, "
            r"$\le 0$ on $\mathcal U(t)$", hypotheses=THM1, part=I),
    declare("M17", "Lemma 6, eqs. (32)–(34)",
            r"The $W_O$ rows of lucky neurons grow (eq. (32)), the others' stay small (eq. (34), "
            r"$\lesssim \eta\sqrt{\log(Bt_0)/(Bt_0)}\,\beta^2/a$)", hypotheses=THM1, part=I),
    declare("M18", "Thm 1 in its own regime (the reference run)",
            r"In a setting that meets Theorem 1's width, batch, prompt-length, noise and pattern-count conditions, "
            r"training on the $M_1$ required tasks reaches zero in-domain error with high probability",
            hypotheses=THM1, part=I),
    declare("O1", "Thm 2",
            r"Zero error on unseen tasks whose patterns are non-negative combinations of training patterns", part=I),
    declare("O2", "Cor. 1 eq. (12)",
            r"On shifted test data the attention mass on $\mathcal N_*$ is at least $1 - \Theta(1/M)$", part=I),
    declare("O3", "Thm 2 / Remark 1 (1)",
            r"Test patterns outside the cone of the training patterns are not covered", part=I),
    declare("O4", r"Thm 2 ($\nu'$ outside $\mathrm{span}\{\mu\}$)",
            r"Irrelevant test patterns inside $\mathrm{span}\{\mu\}$ break the selection", part=I),
    declare("O5", "Remark 1 (2)", r"The label embeddings must be the training ones, $\pm q$", part=I),
    declare("O6", "this chapter (beyond Remark 1 (1))",
            r"Test patterns that combine training patterns with negative coefficients, which Theorem 2's sufficient "
            r"condition does not cover, are also told apart (near the cone's accuracy)", kind="finding", part=I),
    declare("O7", r"Thm 2 ($l_{ts} \ge 2/\alpha'$), eq. (64)",
            r"A test prompt of length $l_{ts} \ge 2/\alpha'$ suffices for zero error", part=I),
    # ---------------------------------------------------------------- Part II: sample complexity
    declare("S11", "eq. (37)",
            r"$P\big(\#\{\mu_a\ \text{demonstrations}\}/l \le (1-c)\,\alpha/2\big) \le e^{-l c^2\alpha/2}$", part=II),
    declare("S1", "Thm 1 eq. (6) ($\\alpha$)",
            r"The iterations needed fall with $\alpha$, like $(C - 1/\alpha)^{-1}$", hypotheses=THM1, part=II),
    declare("S2", "Thm 1 eq. (6) ($\\tau$)",
            r"Noise slows training, $(1 - \epsilon_m - \tau M_1)^{-1/2}$, and needs $\tau \le O(1/M_1)$", hypotheses=THM1, part=II),
    declare("S3", "Thm 1 eq. (6) ($\\lambda_*$)", r"The iterations needed scale like $1/\lambda_*$", hypotheses=THM1, part=II),
    declare("S4", "Thm 1 eq. (6) ($\\eta$)", r"The iterations needed scale like $1/\eta$", hypotheses=THM1, part=II),
    declare("S5", "Thm 1 eq. (6) ($\\sqrt M$)", r"The iterations needed scale like $\sqrt M$", hypotheses=THM1, part=II),
    declare("S10", "Lemma 3 eqs. (15)–(16)",
            r"For lucky neurons the $W_O$ update on the feature coordinates is $\lambda_*$ times that on the label "
            r"coordinates", hypotheses=THM1, part=II),
    declare("S6", "Thm 1 eq. (5), eq. (38)",
            r"The training prompt length needed is about $2\log M/\alpha$ (it shrinks with $\alpha$)", hypotheses=THM1, part=II),
    declare("S7", "the ideal selector (this chapter, Derivation 1)",
            r"No trained model beats the oracle accuracy $1 - \frac12(1 - \alpha/2)^l$", kind="finding", part=II),
    declare("S8", "Lemma 1",
            r"Fewer than $M_1$ training tasks cannot cover every pattern evenly; the model then fails on unseen tasks",
            part=II),
    declare("S13", "proof of Thm 1, eq. (39)",
            r"A batch of $B \ge M_1\log M_1$ prompts contains every relevant pattern as a query (coupon "
            r"collector), with high probability", part=II),
    declare("S14", "Thm 1 ($N = BT$)",
            r"The sample complexity is $N = BT$: every SGD step uses $B$ fresh prompts", kind="consistency", part=II),
    declare("S9", "Sec. 3.3 (even coverage)",
            r"An unbalanced set of $M_1$ tasks leaves a shortcut: good on the training tasks, poor on the others",
            part=II),
)
