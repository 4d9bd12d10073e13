"""Sides of several launches (issue 31 item 5, issue 32's programmatic dependent launch):
`[[reference.then]]` launches run in order on the buffers the one before left, intermediate
results in `scratch` buffers; races are each launch's own, and a programmatic launch's
accesses before `griddepcontrol.wait` race with any launch that may still run (the one before,
and before it every programmatic one back to a stream-ordered launch). Real nvcc output:
kernels/pdl/multi.cu (the corpus family)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from semantics.errors import KeqError
from verifier.api import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.emulate import run_side
from verifier.fuzz.runner import fuzz
from verifier.fuzz.backends import get_backend
from verifier.spec import load_spec

DATA = Path(__file__).resolve().parents[2] / "kernels" / "pdl"


def _verify(spec):
    return verify(spec, timeout_s=60, jobs=1)


def _edited(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    shutil.copy(DATA / "multi.ptx", tmp_path / "multi.ptx")
    text = (DATA / name).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    p = tmp_path / name
    p.write_text(text)
    return p


def test_two_launches_through_a_scratch_buffer_equal_the_fused_kernel():
    v = _verify(load_spec(DATA / "fused.toml"))
    assert v.kind == EQUIVALENT, v.reasons
    assert "fused == row_sums; divide" in v.claim
    assert "12 launch shape(s)" in v.coverage


def test_the_emulator_runs_the_launches_in_order():
    spec = load_spec(DATA / "fused.toml")
    x = np.arange(1, 7, dtype=np.float32)
    values = {"x": x, "sums": np.zeros(2, np.float32), "out": np.zeros(6, np.float32),
              "rows": 2, "cols": 3}
    final, _ = run_side(spec.reference, values, {"rows": 2, "cols": 3})
    assert final["sums"].tolist() == [6.0, 15.0]
    assert np.array_equal(final["out"], x / np.repeat(np.float32([6, 15]), 3))
    assert values["sums"].tolist() == [0.0, 0.0]          # (inputs are not modified)


def test_a_fused_kernel_that_drops_a_column_is_refuted(tmp_path):
    p = _edited(tmp_path, "fused.toml", ('kernel = "fused"', 'kernel = "fused_short"'),
                ('expect = "equivalent"', 'expect = "not-equivalent"'))
    v = _verify(load_spec(p))
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert v.counterexample.scalars["cols"] >= 1


def test_launches_in_the_wrong_order_read_the_scratch_buffer_before_it_is_written(tmp_path):
    # the multi-launch side as the candidate, its two launches swapped: the division reads
    # sums nobody wrote yet (the scratch buffer's arbitrary contents)
    text = (DATA / "fused.toml").read_text()
    ref = text[text.index("[reference]"):text.index("[candidate]")]
    cand = text[text.index("[candidate]"):text.index("[[param]]")]
    first, then = ref.split("[[reference.then]]")
    swapped = ("[candidate]\nptx = \"multi.ptx\"" + then +
               "\n[[candidate.then]]\n" + first.split("ptx = \"multi.ptx\"\n")[1])
    new = text.replace(ref, cand.replace("[candidate]", "[reference]")).replace(cand, swapped)
    shutil.copy(DATA / "multi.ptx", tmp_path / "multi.ptx")
    p = tmp_path / "swapped.toml"
    p.write_text(new.replace('expect = "equivalent"', 'expect = "not-equivalent"'))
    spec = load_spec(p)
    assert [s.kernel for s in spec.candidate.launches] == ["divide", "row_sums"]
    v = _verify(spec)
    assert v.kind == NOT_EQUIVALENT, v.reasons


def test_a_programmatic_launch_that_waits_is_equivalent():
    v = _verify(load_spec(DATA / "pdl.toml"))
    assert v.kind == EQUIVALENT, v.reasons


def test_reading_before_griddepcontrol_wait_is_a_race_in_a_programmatic_launch():
    v = _verify(load_spec(DATA / "pdl_early.toml"))
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert re.search(r"data race on 'sums'.*before its griddepcontrol.wait.*row_sums_pdl's "
                     r"write", v.reasons[0]), v.reasons


def test_the_same_read_is_fine_when_the_launch_is_not_programmatic(tmp_path):
    # a stream launch starts after the one before ends: the early read is ordered
    p = _edited(tmp_path, "pdl_early.toml", ("programmatic = true\n", ""),
                ('expect = "not-equivalent"', 'expect = "equivalent"'))
    v = _verify(load_spec(p))
    assert v.kind == EQUIVALENT, v.reasons


def test_an_early_read_races_with_a_launch_two_back_through_a_programmatic_one(tmp_path):
    # row_sums_pdl; divide_pdl (programmatic, waits); divide_pdl_early (programmatic, reads
    # the sums before its wait). The launch just before only reads the sums, but it may
    # trigger before row_sums_pdl, which writes them, has ended.
    third = ('[[candidate.then]]\nkernel = "divide_pdl_early"\nprogrammatic = true\n'
             'grid = ["ceil_div(rows * cols, 32)", 1, 1]\nblock = [32, 1, 1]\n'
             'args = ["x", "sums", "out", "rows", "cols"]\n\n[[param]]')
    p = _edited(tmp_path, "pdl_early.toml", ('kernel = "divide_pdl_early"', 'kernel = "divide_pdl"'))
    p.write_text(p.read_text().replace("[[param]]", third, 1))
    spec = load_spec(p)
    assert [s.kernel for s in spec.candidate.launches] == [
        "row_sums_pdl", "divide_pdl", "divide_pdl_early"]
    v = _verify(spec)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert re.search(r"data race on 'sums'.*row_sums_pdl's write", v.reasons[0]), v.reasons


def test_the_fuzzer_finds_the_early_read():
    rep = fuzz(load_spec(DATA / "pdl_early.toml"), get_backend("emulator"), examples=20,
               seed_=0)
    assert rep.difference is not None and rep.difference.kind == "race"


@pytest.mark.parametrize("edit,message", [
    (("programmatic = true", "programmatic = 1"), r"pdl_early.toml:\d+:\d+: .*programmatic"),
    (('kernel = "divide_pdl_early"', 'kernel = "nope"'),
     r"pdl_early.toml:\d+:\d+: .*no kernel \(.entry\) named 'nope'"),
    (('block = [32, 1, 1]\nargs = ["x", "sums", "out"', 'blok = [32, 1, 1]\nargs = ["x", "sums", "out"'),
     r"pdl_early.toml:\d+:\d+: .*blok"),
])
def test_bad_launch_tables_are_located_errors(tmp_path, edit, message):
    p = _edited(tmp_path, "pdl_early.toml", edit)
    with pytest.raises(KeqError) as e:
        load_spec(p)
    assert re.search(message, e.value.render() if hasattr(e.value, "render") else str(e.value))


def test_a_certificate_hash_covers_every_launch(tmp_path):
    from verifier.certs.hashing import side_sha256
    spec = load_spec(DATA / "fused.toml")
    before = side_sha256(spec.reference)
    # the later launch's PTX in a file of its own, then changed: the side's hash changes
    shutil.copy(DATA / "multi.ptx", tmp_path / "multi.ptx")
    text = (DATA / "fused.toml").read_text().replace(
        '[[reference.then]]\nkernel = "divide"', '[[reference.then]]\nptx = "other.ptx"\nkernel = "divide"')
    (tmp_path / "fused.toml").write_text(text)
    ptx = (DATA / "multi.ptx").read_text()
    (tmp_path / "other.ptx").write_text(ptx)
    same = side_sha256(load_spec(tmp_path / "fused.toml").reference)
    (tmp_path / "other.ptx").write_text(ptx.replace("div.rn.f32", "mul.rn.f32", 1))
    changed = side_sha256(load_spec(tmp_path / "fused.toml").reference)
    assert before == same != changed
