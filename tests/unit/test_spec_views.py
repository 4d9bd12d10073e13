"""Texture and surface params of a pair spec (`verifier/spec/views.py`): the form loads with
its modes into the claim, each launch gets its objects, and every mistake is a located
`file:line:col` error (exit 3 from `keq verify`), never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from semantics.errors import LocatedError
from verifier.cli.main import main
from verifier.spec import load_spec

DATA = Path(__file__).resolve().parents[2] / "kernels" / "texture"
BLUR = (DATA / "blur.toml").read_text()
SURF = (DATA / "scale_surface.toml").read_text()


@pytest.fixture
def write(tmp_path):
    shutil.copy(DATA / "texture.ptx", tmp_path / "texture.ptx")

    def _write(text: str) -> Path:
        p = tmp_path / "pair.toml"
        p.write_text(text)
        return p
    return _write


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_texture_param_loads_with_its_modes(write):
    spec = load_spec(write(BLUR))
    (v,) = spec.views
    assert (v.name, v.kind, v.buffer, v.type, v.address, v.filter, v.normalized) == \
        ("tex", "texture", "img", "f32", "clamp", "point", False)
    cand = spec.candidate
    assert cand.arg_names == ("img", "out", "w", "h") and [i for i, _ in cand.views] == [0]
    obj = cand.views_at({"w": 7, "h": 2})[0]
    assert (obj.dims, obj.elem, obj.address) == ((7, 2), "f32", "clamp")
    assert spec.reference.views == ()


@pytest.mark.parametrize("old, new, needle, message", [
    ('address = "clamp"', 'address = "repeat"', "address", "address 'repeat' is not one of"),
    ('texture = "img"', 'texture = "nope"', "texture =", "names 'nope', which is not a buffer"),
    ('texture = "img"', 'texture = "w"', "texture =", "names 'w', which is not a buffer"),
    ('dims = ["w", "h"]', 'dims = ["w", "h", 2, 2]', "dims", "must have 1 to 3 entries"),
    ('dims = ["w", "h"]', 'dims = ["w", "q"]', "dims", "names 'q', which is not a param"),
    ('address = "clamp"', 'address = "wrap"', "address", "needs normalized = true"),
    ('normalized = false', 'normalized = 0', "normalized", "must be true or false"),
    ('filter = "point"', 'filter = "point"\nlength = 3', "length = 3", "unknown key 'length'"),
    ('texture = "img"', 'texture = "img"\nbuffer = "f32"', 'buffer = "f32"', "takes no"),
])
def test_bad_texture_params_are_located(write, old, new, needle, message):
    text = BLUR.replace(old, new)
    with pytest.raises(LocatedError) as ei:
        load_spec(write(text))
    e = ei.value
    assert message in e.message
    view_at = _line(text, 'name = "tex"')
    assert e.loc.line >= view_at and e.loc.line == _line(text[text.index('name = "tex"'):],
                                                         needle) + view_at - 1


def test_a_side_passing_the_texture_and_its_buffer_is_refused(write):
    text = BLUR.replace('args = ["tex", "out", "w", "h"]', 'args = ["tex", "img", "w", "h"]')
    with pytest.raises(LocatedError, match="both texture 'tex' and its buffer 'img'") as ei:
        load_spec(write(text))
    assert ei.value.loc.line == _line(text, 'args = ["tex", "img"')


def test_surface_params_take_no_sampling_modes(write):
    text = SURF.replace('surface = "src"', 'surface = "src"\naddress = "clamp"')
    with pytest.raises(LocatedError, match="unknown key 'address' in surface param"):
        load_spec(write(text))


def test_dims_past_the_buffer_are_an_error_about_the_spec(write):
    spec = load_spec(write(BLUR.replace('length = "w * h"\naccess = "in"',
                                        'length = "w"\naccess = "in"')))
    with pytest.raises(LocatedError, match="more than buffer 'img' holds"):
        spec.candidate.views_at({"w": 4, "h": 2})


def test_keq_verify_exits_3_with_the_location(write, capsys):
    path = write(BLUR.replace('address = "clamp"', 'address = "repeat"'))
    assert main(["verify", str(path)]) == 3
    err = capsys.readouterr().err
    assert f"{path}:{_line(BLUR, 'address =')}:" in err and "error:" in err
    assert "Traceback" not in err


def test_a_texture_takes_three_dims_a_surface_two(write):
    text = BLUR.replace('dims = ["w", "h"]', 'dims = ["w", 1, "h"]')
    spec = load_spec(write(text))
    assert spec.candidate.views_at({"w": 7, "h": 2})[0].dims == (7, 1, 2)
    text = SURF.replace('dims = ["w", "h"]', 'dims = ["w", "h", 1]', 1)
    with pytest.raises(LocatedError, match="surface 'src_s' must have 1 to 2 entries"):
        load_spec(write(text))
