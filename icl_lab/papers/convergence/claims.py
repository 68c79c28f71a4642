"""The convergence paper's claims (Huang, Cheng, Liang, "In-Context Convergence of Transformers"),
checked in the chapter's notebook.

Kinds: ``paper`` (a statement of the paper), ``consistency`` (holds by construction or checks the
library's own code), ``finding`` (the book's own result or prediction beyond the paper)."""
from ...claims import declare

CLAIMS = (
    # ---------------------------------------------------------------- exact identities
    declare("I1", "Lemma C.1",
            r"The closed-form gradient of the loss with sampled $w$ equals autograd", kind="consistency"),
    declare("I2", "Lemma 4.1 / C.2",
            r"$\alpha_k, \beta_{k,n}$ computed from the counts equal $-V^\top \nabla_Q \mathcal{L}\, V$",
            kind="consistency"),
    declare("I3", "Lemma C.6",
            r"Loss decomposition $\mathcal{L} = \frac12 \sum_k \mathbb{E}\big[\mathbb{1}\{x_q = v_k\}\big((1-\mathrm{Attn}_k)^2"
            r" + \sum_{m\neq k} \mathrm{Attn}_m^2\big)\big]$", kind="consistency"),
    declare("I4", "Lemma 4.1 (GD in feature coordinates)",
            r"GD on the full $Q$ equals GD on $S = V^\top Q V$ (same $\eta$, same prompts)", kind="consistency"),
    declare("I6", "this chapter (derived from Lemma 4.1)",
            r"Span invariance ($Q$ stays in $\mathrm{span}\{v_n v_k^\top\}$) and column decoupling",
            kind="consistency"),
    # ---------------------------------------------------------------- initial gradients and the floor
    declare("G0-bal", "Sec. 4.2",
            r"Balanced: $\alpha_k^{(0)} = \Theta(1/K^2) \gg |\beta_{k,n}^{(0)}| = \Theta(1/K^3)$ (closed form "
            r"$\alpha_k^{(0)} = (K-1)/K^3$, $\beta_{k,n}^{(0)} = -1/K^3$)", kind="consistency"),
    declare("G0-imb", "Sec. 4.1.1",
            r"Imbalanced, $k > 1$: $\beta_{k,1}^{(0)} \leq -\Omega(1/K)$ while $\alpha_k^{(0)}, |\beta_{k,n}^{(0)}| "
            r"= \Theta(1/K^2)$"),
    declare("G0-fig3", "App. A, Fig. 3a narrative",
            r"For $p = (0.8, 0.1, 0.1)$ and query $v_2$: $\beta_{2,3}^{(0)} > 0$, so $\mathrm{Attn}_3$ first rises"),
    declare("I7", "eq. (12), Lemma C.9",
            r"$\mathcal{L}_k^{\rm low} = \frac12 \frac{K}{K-1} (1 - p_k)^N$", kind="consistency"),
    declare("C9", "Lemmas C.7, C.9",
            r"$\mathcal{L}_k^{\rm low} \leq \mathcal{L}_k^*$ and both are of the same order: at App. A's $N = 60$, GD "
            r"on the analysed model never goes below the floor and ends within a factor 2 of it",
            hypotheses=("GD run long enough to approach the infimum",)),
    declare("C3", "Lemma C.3 (Devroye 1983)",
            r"$P\big(\sum_i |X_i - \mathbb{E} X_i| > N\epsilon\big) \leq 3 e^{-N\epsilon^2/25}$ when "
            r"$K/N \leq \epsilon^2/20$", kind="consistency"),
    # ---------------------------------------------------------------- balanced features
    declare("B1", "Thm 3.1, Lemmas D.3–D.4, D.9, fn. 3",
            r"Balanced: $\alpha_k \geq 0$, $|\beta_{k,n}| = O(\alpha_k/K)$, $\beta \leq 0$ after phase I, and all "
            r"off-target attention falls together"),
    declare("B2", "Lemma D.5", r"Balanced phase I: $T_{1,k} = O(K^2 \log K / \eta)$"),
    declare("B3", "Lemma D.10, Thm 3.1",
            r"Balanced phase II: $\tau_\epsilon - T_1 = O(K \log(K \epsilon^{-1/2}) / \epsilon)$"),
    declare("B4", "this chapter (derived late-time law)", 
            r"Balanced: $\mathcal{L}_k \sim 1/(4 p_k \tau)$, so $\tau_\epsilon \sim K/(4\epsilon)$: the $K/\epsilon$ "
            r"term of $T^*$ is tight up to the log", kind="finding"),
    # ---------------------------------------------------------------- dominant feature
    declare("D1", "Lemmas F.4–F.5",
            r"Dominant feature: $\beta_{1,n} \leq 0$ from $t = 0$ and $|\beta_{1,n}| = O(\alpha_1/K)$"),
    declare("D2", "Thm 3.2(1), Lemma F.6",
            r"The dominant feature converges within $T_1 = O(\log(\epsilon^{-1/2})/(\eta\epsilon))$, independent of $K$"),
    declare("D3", "Thm 3.2 (stage-wise convergence)",
            r"$T_k \gg T_1$: under-represented features converge much later, the gap growing with $K$"),
    # ---------------------------------------------------------------- under-represented features
    declare("U1", "Fig. 1, Sec. 4.1",
            r"Four phases in order: $B_{k,1}$ falls first ($|\beta_{k,1}| > \alpha_k$) while $B_{k,n}$ first rises, "
            r"then the lead switches to $\alpha_k$, $A_k$ grows, and finally all $\beta \leq 0$ while $\mathcal{L}_k$ "
            r"converges (where the switch happens: claim J1)"),
    declare("I5", "Lemma 4.1 (remark after it)", r"$\alpha_k \geq 0$ at every step: $A_k$ never decreases "
            r"($\alpha_k = p_k\,\mathbb{E}[a_k \lVert e_k - a\rVert^2]$)", kind="consistency"),
    declare("U2", "Lemmas 4.2–4.5 (phase structure)", r"Phase order $T_1 < T_2 < T_3 < T_4$ (the paper's thresholds) at $p_1 = 0.5$"),
    declare("U2-p03", "Lemma 4.2 at $p_1 = 0.3$",
            r"For $p_1 = 0.3$ phase I ends: $B_{k,1}$ reaches the paper's threshold $-0.49 \log K$",
            hypotheses=("p_1 = Theta(1), p_k = Theta(1/K)", "N >= poly(K) (mean field)")),
    declare("U2m", "this chapter (mechanistic markers, proposed)",
            r"Constant-free markers $\tau_{sw} < \tau_{AB} < \tau_{\log K} < \tau_\epsilon$ hold for every $p_1$ once "
            r"$K \geq 50$", kind="finding"),
    declare("U3", "Lemmas E.6, E.12, E.18, E.24",
            r"Phase durations: I $\leq K^{1.98}\log K$, II $\leq K^2 \log K$, III $\leq K^{1.5}\log K$, "
            r"IV $\leq K \log(K\epsilon^{-1/2})/\epsilon$"),
    declare("U4", "Lemmas E.3–E.5, E.9–E.11, E.15–E.17, E.21–E.23",
            r"Per-phase gradient bounds hold up to constants: the normalised ratios stay bounded in $K$; all "
            r"$\beta \leq 0$ in phase IV"),
    declare("U5", "this chapter (derived)", r"Late-time law: $4 p_k \tau \mathcal{L}_k \to 1 + O(1/K)$ (tested: $|4p_k\tau\mathcal{L}_k - 1| \leq 2/K$ "
            r"at $\tau \geq 100\,T_3$, for every $K$)", kind="finding"),
    declare("F1", "Lemma E.24",
            r"Phase IV lasts $O(K \log(K\epsilon^{-1/2})/(\eta\epsilon))$: its length scales like $1/\epsilon$"),
    declare("J1", "Sec. 4.1.2 (switch at $B_{k,1} \\approx -\\frac12 \\log K$)",
            r"The switch happens near $B_{k,1} = -\frac12 \log K$, approached as $K$ grows, for every $p_1$"),
    declare("G1", "Thms 3.1, 3.2 (premise $N \\geq \\mathrm{poly}(K)$)",
            r"Finite-$N$ dynamics approach the mean field as $N$ grows; small $N$ shifts the phases and raises "
            r"$\mathcal{L}^{\rm low}$"),
    declare("B5", "Thm 3.1(2), Thm 3.2(3)",
            r"Attention concentrates: $(1 - \mathrm{Attn}_k)^2 \leq O(\epsilon)$ with probability "
            r"$1 - e^{-\Omega(\mathrm{poly}(K))}$ over the context"),
    declare("E1", "all time bounds $\\propto 1/\\eta$",
            r"In $\tau = \eta t$ the dynamics do not depend on $\eta$ (GD at $\eta = 1$ and $20$ against the flow)"),
    # ---------------------------------------------------------------- App. A figures (practical transformer)
    declare("F2a", "App. A, Fig. 2a",
            r"Imbalanced: $\mathcal{L}_1$ quickly reaches nearly zero; $\mathcal{L}_2, \mathcal{L}_3$ converge to zero "
            r"considerably later"),
    declare("F2b", "App. A, Fig. 2b", r"Balanced: all $\mathcal{L}_k$ decrease in a similar manner"),
    declare("F3a", "App. A, Fig. 3",
            r"$\mathrm{Attn}_k$ of each query feature increases close to 1 by the end of training"),
    declare("F3b", "App. A, Fig. 3a (phase I)",
            r"Imbalanced, query $v_2$: $\mathrm{Attn}_1$ decreases while $\mathrm{Attn}_3$ increases (phase I; the "
            r"paper: from epoch 10 to 100)"),
    declare("F3c", "App. A, Fig. 3b, footnote 3", r"Balanced: all off-diagonal attention scores decrease together"),
    # ---------------------------------------------------------------- the analysed model on App. A's setting
    declare("A'1", "Thm 3.2 on App. A's setting",
            r"Population GD on the $Q$-only model reaches $\mathcal{L}_2 - \mathcal{L}_2^{\rm low} < 10^{-3}$ "
            r"($K = 3$, $N = 60$, $p = (0.8, 0.1, 0.1)$)"),
    declare("A'2", "this chapter (the analysed model under App. A's optimiser)",
            r"Adam at lr 0.002 for 400 epochs cannot concentrate the $Q$-only model's attention: entries of $Q$ move "
            r"by about lr $\times$ epochs $= 0.8$, errors stay far above the floor", kind="finding"),
    declare("A'3", "Thm 3.2 (stage-wise) for the analysed model with Adam",
            r"With lr 0.02 the $Q$-only model shows the stage-wise pattern of Fig. 2a and concentrates attention"),
    declare("I-w", "Sec. 3.1 'In-context learning ability'",
            r"The trained model predicts $\langle w, x_{\rm query}\rangle$ for task vectors $w$ never seen in "
            r"training: its relative error falls with training, tracking $1 - \mathrm{Attn}_k$"),
    declare("I-w-bound", "Sec. 3.1 'In-context learning ability'",
            r"For any $w$: $|\hat y - \langle w, v_k\rangle| \leq (1 - \mathrm{Attn}_k) \max_m |\langle w, v_k - v_m\rangle|$ "
            r"(a triangle inequality)", kind="consistency"),
    # ---------------------------------------------------------------- not checkable
    declare("R1", "Remark 1",
            r"The restricted parametrisation loses at most $\Theta(e^{-\mathrm{poly}(K)})$ against the general "
            r"$W^V, W^{KQ}$ (probed with App. A's general one-block transformer: it does not beat the restricted "
            r"model's floor $\mathcal{L}_k^{\rm low}$ by more than the floor's own order)"),
    declare("C45", "Lemmas C.4, C.5",
            r"High-probability events $E^*_{\rm bal}, E^*_{\rm imbal}$ with $c \geq \sqrt{20 K^3/N}$"),
)
