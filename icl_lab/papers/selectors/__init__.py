"""*Transformers as Multi-Task Feature Selectors* (H. Li, M. Wang et al.): theory (bounds, oracle,
collapse recursion, closed-form gradients), data (task sets), training (batched SGD runs and their
measurements), experiments (configs per scale), figures and the chapter's claims. The figures are split
by part of the chapter: :mod:`.figures` (Part I, the mechanism and out-of-domain tests, and the live
widget) and :mod:`.figures_sample_complexity` (Part II, Theorem 1's sample complexity)."""
from .data import (TASK_SETS, all_pair_tasks, is_balanced, pattern_coverage, shortcut_accuracy, task_set,  # noqa: F401
                   unbalanced_tasks)
from .theory import (binomial_lower_tail, chernoff_tail, collapse_recursion, collapse_sharpness,  # noqa: F401
                     collapse_times, fit_alpha_law, gradients_closed_form, holds, holds_all, oracle_accuracy,
                     prompt_length_bound, theorem1_conditions, violated)
from .training import (Group, HitSweep, TrainResult, evaluate, group_hits,  # noqa: F401
                       output_layer_split, train_groups)
