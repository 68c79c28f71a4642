"""Hundreds of random invalid configurations, through every user-facing entry point: each gets the
documented error — :class:`icl_lab.ConfigError` whose message starts with the offending field's
name (the command line prints it as ``icl-lab: error: <message>`` and exits with status 2) — and
nothing is computed or written."""
from __future__ import annotations

import json
import random

import pytest

from icl_lab import ConfigError, cli, sweep
from icl_lab import params, records
from icl_lab.papers.common.experiments import ContextLengthConfig

CS = "common.context_length"

# invalid values per field of ContextLengthConfig, as Python values; ``typed`` ones are rejected by
# the type layer of the sweep/CLI/store (e.g. True for a number) but not by every config's validate()
POSITIVE_INT = [0, -1, -7, 2.5, "abc", "", None, "1.5", [3], float("nan"), float("inf")]
INVALID = {
    "d": POSITIVE_INT,
    "K": POSITIVE_INT + [99],  # 99 > d = 16
    "seeds": POSITIVE_INT,
    "steps": POSITIVE_INT,
    "batch": POSITIVE_INT,
    "test_prompts": POSITIVE_INT,
    "linear_fit_prompts": POSITIVE_INT,
    "seed": [-1, -100, 0.5, "x", None],
    "test_seed": [-1, 1.5, "seed", None],
    "lr": [0, 0.0, -1.0, -1e-9, float("nan"), float("inf"), "fast", None, [1.0]],
    "N_values": [(), (0,), (-2, 4), (2.5,), ("a",), (2, None), "abc", None, 5],
    "nw_bandwidths": [(), (0.0,), (-1.0, 1.0), ("x",), None, (float("nan"),), 1.0],
}
TYPED_ONLY = {"lr": [True, False], "d": [True], "steps": [False]}
# invalid as Python values but valid when typed: "--set N_values=5" is the one-element list [5]
PYTHON_ONLY = {("N_values", 5), ("nw_bandwidths", 1.0)}
# a field whose error message may use the paper's symbol for its entries
ALIASES = {"N_values": ("N_values", "N")}
VALID = {"d": [8, 16], "steps": [5, 10], "lr": [0.5, 3.0], "seeds": [1, 2], "batch": [4, 16], "N_values": [(2, 4)]}
BAD_OPTIONS = [  # (argv fragment, text the error must contain)
    (["--seeds", "0"], "argument --seeds: must be an integer in [1, 1000000]"),
    (["--seeds", "two"], "argument --seeds: must be an integer in [1, 1000000]"),
    (["--seeds-per-task", "-3"], "argument --seeds-per-task: must be an integer in [1, 1000000]"),
    (["--workers", "0", "--executor", "dask"], "argument --workers: must be an integer in [1, "),
    (["--scale", "medium"], "argument --scale: invalid choice"),
    (["--executor", "slurm"], "argument --executor: invalid choice"),
    (["--set", "steps"], "--set expects key=value"),
    (["--set", "=3"], "--set expects key=value"),
    (["--grid", "lr="], "--grid lr needs one or more"),
    (["--grid", "lr=1,1"], "--grid lr lists 1.0 twice"),
    (["--grid", "seeds=1,2"], "seeds cannot be swept"),
    (["--set", "bogus=1"], "bogus is not a parameter of ContextLengthConfig"),
    (["--address", "tcp://h:1"], "--address only applies with --executor dask"),
]


def _text(value) -> str:
    """How the value is typed after --set key=."""
    if isinstance(value, tuple):
        return "[" + ",".join(_text(v) for v in value) + "]"
    if value is None:
        return "None"
    return str(value) if not isinstance(value, str) else value


def _cases(n: int, seed: int = 2024):
    rng = random.Random(seed)
    fields = sorted(INVALID)
    for i in range(n):
        bad_field = rng.choice(fields)
        typed = bad_field in TYPED_ONLY and rng.random() < 0.15
        bad_value = rng.choice(TYPED_ONLY[bad_field] if typed else INVALID[bad_field])
        overrides = {}
        for f in rng.sample(sorted(VALID), rng.randint(0, 2)):
            if f != bad_field and not (bad_field == "K" and f == "d"):
                overrides[f] = rng.choice(VALID[f])
        overrides[bad_field] = bad_value
        keys = list(overrides)
        rng.shuffle(keys)
        yield i, {k: overrides[k] for k in keys}, bad_field, typed, rng.choice(["ci", "paper"])


def _names(field):
    return ALIASES.get(field, (field,))


def _check_message(msg: str, field: str):
    # a list item's error names the item: "N_values[1] must be ..."
    assert msg.startswith(tuple(f"{n}{sep}" for n in _names(field) for sep in (" ", "["))), msg
    assert " must " in msg or " is not " in msg, msg
    assert "\n" not in msg


def test_a_few_hundred_random_invalid_configurations(tmp_path, capsys):
    results = tmp_path / "results"
    seen = set()
    count = 0
    for i, overrides, field, typed, scale in _cases(360):
        entry = i % 4
        if entry in (1, 2) and any(f == field and type(v) is type(overrides[field]) and v == overrides[field]
                                   for f, v in PYTHON_ONLY):
            overrides[field] = "[]"  # an empty list instead        if entry == 0:  # Python: plan + run with Python values
            with pytest.raises(ConfigError) as e:
                sweep.run(sweep.plan(CS, scale, sets=overrides), results_dir=results, progress=False)
            _check_message(str(e.value), field)
        elif entry == 1:  # Python: command-line style strings
            with pytest.raises(ConfigError) as e:
                sweep.plan(CS, scale, sets=[f"{k}={_text(v)}" for k, v in overrides.items()])
            _check_message(str(e.value), field)
        elif entry == 2:  # the command line, invalid value inside a grid
            grid_value = ContextLengthConfig.for_scale(scale)
            good = getattr(grid_value, field)
            rest = [f"{k}={_text(v)}" for k, v in overrides.items() if k != field]
            argv = ["run", CS, "--scale", scale, "--results", str(results)]
            if field in ("seed", "seeds"):  # not sweepable: set them
                rest.append(f"{field}={_text(overrides[field])}")
            else:
                argv += ["--grid", f"{field}={_text(good)},{_text(overrides[field])}"]
            if rest:
                argv += ["--set", *rest]
            code = cli.main(argv)
            err = capsys.readouterr().err.strip()
            assert code == 2, (argv, err)
            assert err.startswith("icl-lab: error: ") and len(err.splitlines()) == 1, err
            msg = err[len("icl-lab: error: "):]
            if msg.startswith("--grid"):  # e.g. the bad value equals the good one after parsing
                assert field in msg
            else:
                _check_message(msg, field)
        else:  # a stored file (forged, with a valid checksum) holding the invalid config
            if typed and field == "lr":
                overrides[field] = "fast"
            cfg_json = records.config_to_json(ContextLengthConfig.for_scale(scale))
            cfg_json.update(json.loads(json.dumps(
                {k: (list(v) if isinstance(v, tuple) else v) for k, v in overrides.items()})))
            with pytest.raises(ConfigError) as e:
                records.config_from_json(ContextLengthConfig, cfg_json)
            _check_message(str(e.value), field)
        seen.add((field, entry))
        count += 1
    assert count >= 300
    assert len(seen) >= 40  # every field through several entry points
    assert not results.exists(), "an invalid configuration left files behind"


@pytest.mark.parametrize("fragment,message", BAD_OPTIONS)
def test_bad_command_line_options(tmp_path, capsys, fragment, message):
    argv = ["run", CS, "--results", str(tmp_path / "r"), *fragment]
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("icl-lab") and message in err[-1], err
    assert not (tmp_path / "r").exists()


def test_direct_config_construction_names_the_field():
    """The notebooks' entry point, ``Config.for_scale(**overrides)``: validate() names the field."""
    rng = random.Random(7)
    for _ in range(100):
        field = rng.choice(sorted(INVALID))
        value = rng.choice(INVALID[field])
        with pytest.raises(ConfigError) as e:
            ContextLengthConfig.for_scale(rng.choice(["ci", "paper"]), **{field: value})
        msg = str(e.value)
        assert msg.startswith(tuple(f"{n} " for n in _names(field))) or msg.startswith(f"{field}["), msg


def test_nan_is_never_a_value():
    with pytest.raises(ConfigError, match=r"^lr must be a number in .* \(got nan\)"):
        params.coerce_value(ContextLengthConfig, "lr", float("nan"))
