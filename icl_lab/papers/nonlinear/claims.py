"""The claims of Li, Duan, Liang (nonlinear regression) that the chapter checks.

``paper``: a statement of the paper (theorem, lemma, proposition, figure observation);
``consistency``: holds by construction or checks the library's own code; ``finding``: the book's
own result beyond the paper.  The chapter ``chapters/nonlinear/nonlinear_regression`` checks each
one where it measures it.
"""
from ...claims import declare

CLAIMS = (
    declare("C2", "Sec. 4, Eq. (10); Sec. 5.2",
            r"$\hat y = \sum_k \mathrm{Attn}_k f(v_k)$, and at $Q = 0$ attention is uniform "
            r"($\mathrm{Attn}_k = |\mathcal V_k|/N$)"),
    declare("C4a", "Lemma 2, App. C",
            r"The closed-form gradients $g_k$, $g_{k,k'}$ equal the true gradient (orthonormal features)"),
    declare("C4b", "Sec. 1 & Lemma 2",
            r"Lemma 2 holds for general, non-orthonormal features: $g_k > 0$ and $g_k$, $g_{k,k'}$ of the orders "
            r"of App. C (a $\Theta$-statement)"),
    declare("C4c", "App. C (proof of Lemma 2)",
            r"App. C's derivation is exact only for orthonormal features: it uses "
            r"$v_{k'}^\top(v_m - v_n) = \mathbb 1\{m=k'\} - \mathbb 1\{n=k'\}$ (a proof gap for general features)",
            kind="finding"),
    declare("R1", "this chapter (Prop. 'exact time rescaling')",
            r"The theory model's trajectory depends on $(\eta, L)$ only through $\eta L^2$", kind="finding"),
    declare("C1", "Sec. 4, after Eq. (9)",
            r"$\mathbb P(P_{1:N}\in\mathcal E^*) \ge 1 - 3e^{-\delta^2 N/25}$ for $\delta \ge \sqrt{20K/N}$"),
    declare("C3", "Lemma 1 (Eq. 11), App. B",
            r"$\mathcal L = \tfrac12\sum_k \mathbb E[\mathbb 1\{x_{\rm query} = v_k\}(1-\mathrm{Attn}_k)^2]\cdot"
            r"\mathcal O(L^2\Delta^2)$ (checked: the exact per-prompt envelope, a triangle inequality)", kind="consistency"),
    declare("C5a", "Lemma 2 (Eq. 12), Sec. 5.1",
            r"$g_k \ge 0$: $q_k$ never decreases (an identity for orthogonal features: $g_k$ is a mean of squares)",
            kind="consistency"),
    declare("C5b", "Props. 2-3, Sec. 5.2",
            r"$q_{k,k'}$ oscillates (no fixed sign of its increments) with an overall decreasing trend"),
    declare("C6", "Prop. 2, Lemma 4",
            r"In Phase I $q_k$ grows at rate $\Theta(\eta L^2\Delta^2/K)$; $q_{k,k'}$ moves slower, "
            r"$\mathcal O(\eta L^2\Delta^2/K^2)$", hypotheses=("N >= K^3",)),
    declare("C7a", "Prop. 2",
            r"$T_f^1 = \Theta(K\log K/(\eta L^2\Delta^2))$: $T^1 \propto L^{-2}$ and $\propto \eta^{-1}$",
            hypotheses=("N >= K^3",)),
    declare("C7b", "Prop. 2", r"$T_f^1$ grows like $K\log K$", hypotheses=("N >= K^3",)),
    declare("C13", "Sec. 4 after Thm 1, Prop. 2",
            r"Larger feature separation $\Delta$ speeds training, $T \propto \Delta^{-2}$"),
    declare("C10", "Thms 1-2, Sec. 5.3 (against R1)",
            r"The theory model's loss curves of every $(L, \eta)$ collapse onto one curve in $\eta L^2 t$ (the "
            r"analytic consequence of R1), so it has no transition at $L^* = \Theta(1/(\Delta\delta))$",
            kind="consistency"),
    declare("R2", "this chapter (D10)",
            r"At fixed $\eta$ the late phase is polynomial: $\mathcal L \approx (K-1)/(4\eta s^4 t)$ and "
            r"$1-\mathrm{Attn}_k \propto t^{-1/2}$, independent of $L$", kind="finding"),
    declare("C8a", "Thm 1", r"$T_f^*$ scales as $1/L^2$"),
    declare("C8b", "Thm 1, Prop. 3",
            r"Flat regime: $T_f^*$ grows like $\log(K/\epsilon)$ as the accuracy $\epsilon \to 0$",
            hypotheses=("K >= 1/eps", "N >= K^3")),
    declare("C9", "Thm 2, Prop. 4",
            r"Sharp regime: $T_s^* \propto \log(KL\Delta/\epsilon)/(\epsilon L^2)$, a slow third phase "
            r"$\propto 1/\epsilon$", hypotheses=("K >= 1/eps", "N >= K^3")),
    declare("C14", "Prop. 3",
            r"In Phase II $q_k$ grows at the steady rate $\Theta(\eta\delta^2L^2\Delta^2/K)$: with "
            r"$\delta = \sqrt{20K/N}$ the rate falls like $1/N$", hypotheses=("N > 20 K^3",)),
    declare("C15", "Thms 1-2, Props. 3-4",
            r"The times $T_f^*, T_s^* \propto \delta^{-2}$ after which the loss is $\mathcal O(\epsilon^2)$ "
            r"(upper bounds; $\propto N$ at $\delta = \sqrt{20K/N}$), while $T_f^1$ has no $\delta$",
            hypotheses=("N > 20 K^3",)),
    declare("C11", "Prop. 1, App. F",
            r"Once $1 - \mathrm{Attn}_k = \mathcal O(\epsilon)$, any $f$ in the class (seen or not) is predicted "
            r"with error $\mathcal O(\epsilon^2)$"),
    declare("C12", "Props. 2-4, App. A (Figs. 2-3)",
            r"Attention columns sum to one; own-feature attention $\to 1$, attention to other features $\to 0$"),
    declare("F1a", "Sec. 6, Fig. 1(a)",
            r"Flat set $L \in \{0.1, 0.2, 0.4\}$: convergence time shortens with increasing $L$"),
    declare("F1b", "Sec. 6, Fig. 1(b)", r"Sharp set $L \in \{1.0, 1.5, 2.0\}$: larger $L$ converges faster"),
    declare("F1c", "Sec. 6 (text on Fig. 1a)", r"$L = 0.1$: the prediction loss decreases to around 1.0 by epoch 40"),
    declare("F1d", "Sec. 6, Figs. 1(a,b)", r"Flat $L$: two training phases; sharp $L$: three phases",
            not_checkable="no operational definition of a phase is given; the curves are shown, and in the "
                          "theory model the curve shape is provably the same for every L (R1, C10)"),
    declare("F2", "App. A, Fig. 2",
            r"$L = 0.1$: diagonal attention approaches 1 before epoch 300, off-diagonal $\to 0$"),
    declare("F3", "App. A, Fig. 3", r"$L = 1$: diagonal attention approaches 1 before epoch 200"),
    declare("F4", "App. A, Fig. 4", r"Polynomial tasks: within both $L$-sets a larger $L$ converges faster"),
    declare("R4", "this chapter (Sec. 8)",
            r"On the polynomial tasks the block memorises its $M$ training prompts; held-out loss stays above "
            r"predicting 0", kind="finding"),
    declare("F4t", "App. A, Fig. 4 (theory model)",
            r"Polynomial tasks, Q-only theory model: a larger $L$ converges faster"),
    declare("A1", "Sec. 6 (announcing App. A)",
            r"App. A contains a robustness check with non-uniform feature frequencies",
            not_checkable="App. A contains Figs. 2-4 and their text only: the announced check is not in the paper; "
                          "the chapter runs it (X1)"),
    declare("X1", "this chapter (non-uniform frequencies)",
            r"With non-uniform frequencies $p = (0.4, 0.3, 0.2, 0.1)$ the theory model's attention still "
            r"concentrates on every feature; rarer features take longer, about $\propto 1/p_k$", kind="finding"),
    declare("R3", "this chapter (D5)",
            r"Orthogonal features of norm $s$ multiply the effective step by $s^4$ (absent from Lemma 2)",
            kind="finding"),
)
