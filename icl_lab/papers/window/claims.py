"""The window paper's claims (Collins et al., NeurIPS 2024), checked in the chapter's two notebooks:
``part="theory"`` (population loss, no training) and ``part="experiments"`` (trained units).

Kinds: ``paper`` (a statement of the paper), ``consistency`` (holds by construction or checks the
library's own code), ``finding`` (the book's own result or prediction beyond the paper)."""
from ...claims import declare

T, E = "theory", "experiments"

CLAIMS = (
    # ---------------------------------------------------------------- Part I: theory
    declare("T-EQ4", "Sec. 2, eq. (4) and (ICL)",
            r"With the reparametrisation (4), the attention head's prediction is the kernel smoother of (ICL) with "
            r"$M = M_K^\top M_Q$", kind="consistency", part=T),
    declare("T-B1", "Lemma B.1",
            r"A value leak $v \neq 0$ in $W_V$'s last column only increases the loss ($f$ and $-f$ equally likely)",
            hypotheses=("f and -f equally likely",), part=T),
    declare("T-DEC", "App. B.1",
            r"$\mathcal{L}(c) = \mathcal{L}_{\rm signal}(c) + \sigma^2\,\mathbb{E}\sum_i a_i^2$: the noise adds a "
            r"variance term and no cross term", part=T),
    declare("T-DEC-hom", "this chapter, Derivation 3",
            r"For the affine and 2-ReLU classes the signal term scales exactly as $L^2$ (the same draws rescaled), so "
            r"$\mathcal{L}(c; L, \sigma) = L^2 S_n(c) + \sigma^2 N_n(c)$", kind="consistency", part=T),
    declare("T-N0", "App. B.1 / Lemma D.2",
            r"$N_n(0) = \mathbb{E}\sum_i a_i^2 = 1/n$ for the uniform window $M = 0$", kind="consistency", part=T),
    declare("T-F2", "Fig. 2", r"Shrinking the window lowers the bias but raises the variance of the estimate", part=T),
    declare("T-B5", "Lemma B.5", r"The minimiser of (ICL) is isotropic, $M^\star = w_{KQ} I$ ($x \sim \mathcal{U}^d$)",
            hypotheses=("x ~ U^d (isotropic inputs)",), part=T),
    declare("T-C2", "Lemma C.2", r"The signal term is at most $4L^2$ for every window", kind="consistency", part=T),
    declare("T-C4", "Lemmas C.4–C.5, eqs. (10)–(11)",
            r"Affine signal $= \frac{L^2}{3d}\,\mathbb{E}\lVert x - \hat x\rVert^2$; its radial (bias) part decays "
            r"like $1/w^2$", part=T),
    declare("T-C8", "Lemmas C.8–C.9",
            r"The 2-ReLU signal lies above half the affine signal (Lemma C.9) and below the Lipschitz bound "
            r"$O(L^2(1/w + 1/n))$ (Lemma C.8): its log-log slope in $c$ lies in $[-2, -1]$ up to the $1/n$ floor",
            part=T),
    declare("T-D2", "Lemma D.2", r"The noise term increases monotonically with the window scale, from $1/n$ to $1$",
            part=T),
    declare("T-D1", "Lemma D.1, Cor. G.5",
            r"In the middle regime the noise term scales as $\sigma^2 w^{d/2}/n$ (upper and lower bound)", part=T),
    declare("T-34-affine", "Thm 3.4 Case 1",
            r"In the admissible regime the optimal window scales as $\Lambda^e$, $\Lambda = nL^2/\sigma^2$, with $e$ "
            r"inside the Case 1 bracket $[\frac{1}{d+4}, \frac{2(d+2)}{d(d+4)}]$",
            hypotheses=("n^(-2/d) <= sigma^2/L^2 <= n",), part=T),
    declare("T-34-relu", "Thm 3.4 Case 2",
            r"In the admissible regime the optimal window scales as $\Lambda^e$ with $e$ inside the Case 2 bracket "
            r"$[\frac{1}{d+2}, \frac{2}{d+2}]$", hypotheses=("n^(-2/d) <= sigma^2/L^2 <= n",), part=T),
    declare("T-34-mono", "Thm 3.4 / Sec. 3.2",
            r"The optimal window shrinks ($\lVert M^\star\rVert$ grows) as $L$ or $n$ grows and widens as $\sigma$ grows",
            part=T),
    declare("T-34-sat", "this chapter (beyond Thm 3.4's condition $\\sigma^2/L^2 \\geq \\Omega(n^{-2/d})$)",
            r"Far below the admissible regime (noise-free limit) the $\Lambda$-dependence of the optimal window fades: "
            r"local slope under a quarter of the admissible one",
            kind="finding", part=T),
    declare("T-35-up", "Thm 3.5 (upper bound)",
            r"A model pretrained on $D(\mathcal{F}^+_L)$ learns other $L$-Lipschitz tasks in context about as well as "
            r"their own optimum", part=T),
    declare("T-35-low", "Thm 3.5 (lower bounds)",
            r"Testing at $L' \gg L$ the error grows like $L'^2$ (a matched window: slower); at $L' \ll L$ it stays at a "
            r"noise floor", part=T),
    declare("T-36", "Thm 3.6 / Lemma F.1",
            r"For every $M$, linear attention's ICL loss is at least $L^2/3$ (affine and 2-ReLU tasks)", part=T),
    declare("T-44", "Thm 4.4 (Cases 1, 2)",
            r"The minimiser over $M = c_1 BB^\top + c_2 B_\perp B_\perp^\top$ has $c_2 = 0$ and $c_1 > 0$",
            hypotheses=("sigma = 0 (Case 1) or n = 2 (Case 2)",), part=T),
    declare("T-44-gen", "this chapter (Thm 4.4 beyond its cases)",
            r"Without the theorem's norm constraint and outside its cases ($n = 20$, $\sigma = 0.1$), the minimiser "
            r"still has $c_2 = 0$, with $c_1$ strictly inside the searched range", kind="finding", part=T),
    declare("T-H1", "Lemma H.1",
            r"$\frac{dJ}{dc_1} < 0$ at $c_1 = 0$: a positive window along $\mathrm{col}(B)$ always helps", part=T),
    # ---------------------------------------------------------------- Part II: experiments
    declare("E-F1a", "Fig. 1 (bottom)",
            r"Softmax attention's ICL error falls with $n$ in all three settings; linear attention does not adapt",
            part=E),
    declare("E-F1a-lit", "this chapter (Fig. 1 under the printed formula)",
            r"Under the printed task formula $\nu\cos(\theta - b)$ (linear in $x$ on the circle) linear attention's "
            r"trained error also falls with $n$ for $\nu > 0$, so the verdict on Fig. 1 depends on the reading",
            kind="finding", part=E),
    declare("E-F1b", "Fig. 1 (top, middle)",
            r"The softmax window shrinks as the Lipschitzness $\nu$ grows (trained and optimal)", part=E),
    declare("E-F3", "Fig. 3",
            r"$\lVert M\rVert$ after pretraining increases with $L$ (ReLU/cosine tasks, isotropic/non-isotropic inputs)",
            part=E),
    declare("E-34-trained", "this chapter (Thm 3.4 by gradient training)",
            r"Adam-trained $M$ reaches the population-optimal window scale $c^\star I$", kind="finding", part=E),
    declare("E-F4-sigma", "Fig. 4 (Left, Middle-Left)",
            r"$\lVert M\rVert$ grows more slowly and ends lower for larger noise $\sigma$", part=E),
    declare("E-F4-n", "Fig. 4 (Middle-Right, Right)", r"$\lVert M\rVert$ grows faster and ends higher for larger $n$",
            part=E),
    declare("E-B5", "this chapter (Lemma B.5 by gradient training)",
            r"Adam pretraining from a random anisotropic start drives $M$ towards a multiple of the identity for "
            r"isotropic inputs (anisotropy below 0.35 of its start, and below 0.6 of the non-isotropic runs')",
            kind="finding", part=E),
    declare("E-F5-same", "Fig. 5 (Left, Middle-Left, Middle-Right)",
            r"Pretraining on any 1-Lipschitz class gives similar test error on every 1-Lipschitz class", part=E),
    declare("E-F5-mismatch", "Fig. 5 (Right)",
            r"On cosine tasks only the pretraining with matching Lipschitzness generalises; a mismatched $L$ degrades "
            r"sharply", part=E),
    *(declare(f"E-F9-{kind}", "Fig. 9 / App. J.1",
              rf"Low-rank {kind} tasks: softmax attention recovers $\mathrm{{col}}(B)$ ($\rho$ falls) and beats linear "
              r"attention, which learns no structure", part=E)
      for kind in ("affine", "quadratic", "cosine")),
    declare("E-T44", "this chapter (Thm 4.4 by gradient training)",
            r"Trained softmax attention converges towards $M = c\,BB^\top$ on low-rank linear tasks",
            kind="finding", part=E),
    declare("E-F9-sphere", "this chapter (Fig. 9: is the sphere what breaks Assumption 4.3?)",
            r"On the sphere $\lVert B_\perp^\top x\rVert^2 = 1 - \lVert B^\top x\rVert^2$ couples the spurious "
            r"directions to the task, against the independence of Assumption 4.3. This coupling alone does not stop "
            r"recovery: with isotropic covariates on the sphere, softmax attention trained on the quadratic and cosine "
            r"classes ends with $\rho < 0.25$", kind="finding", part=E),
)
