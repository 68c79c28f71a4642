"""Data: feature dictionaries, input laws, task families and prompts."""
from .features import (from_gram, gram, orthonormal_patterns, random_orthonormal, relevant_irrelevant_patterns,
                       separated, standard_basis)
from .inputs import (anisotropic_sphere, categorical, gaussian, low_rank_covariates, orthogonal_complement,
                     random_subspace, sphere, transformed_sphere)
from .prompts import PairClassificationSampler, PromptBatch, PromptSampler, StackedSampler
from .tasks import (AffineTask, CosineFeatureTask, CosineTask, HillsTask, LinearTask, LowRankTask, PairTask,
                    QuadraticTask, TaskFamily, TwoReLUTask, cyclic_pair_tasks, estimate_lipschitz)

__all__ = [n for n in dir() if not n.startswith("_")]
