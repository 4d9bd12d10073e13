"""Solver backends: z3 (always), bitwuzla and cvc5 (the `solvers` extra), behind one contract.

`Backend.check(problem, timeout_s) -> Result`, where `problem` is an `Obligation`, SMT-LIB2
text, or (z3 only) a z3 Boolean term. The answer is one of sat | unsat | unknown | timeout |
error; only sat and unsat are definitive, and nothing but an `unsat` from a solver ever means
"the claim holds". A backend never raises for a solver failure: it answers `error` with the
reason in `detail`. For SAT the model maps each declared bit-vector constant of the obligation
to an int and each Boolean constant to a bool: the user's (`A[4]`) and keq's own
(`keq!indexed!A!4`, `keq!u!...`) alike; only the translation's auxiliaries (`AUX_PREFIX`,
`keq!aux!...`) are left out.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import z3

from verifier.solvers.smtlib import AUX_PREFIX, Obligation, smt_symbol

ANSWERS = ("sat", "unsat", "unknown", "timeout", "error")
DEFINITIVE = ("sat", "unsat")


@dataclass(frozen=True)
class Result:
    answer: str                             # sat | unsat | unknown | timeout | error
    model: dict[str, int | bool] | None     # for sat: declared constants -> values
    seconds: float
    solver: str
    version: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.answer not in ANSWERS:
            raise ValueError(f"bad answer {self.answer!r}")

    @property
    def definitive(self) -> bool:
        return self.answer in DEFINITIVE

    def to_json(self) -> dict:
        return {"answer": self.answer, "model": self.model, "seconds": round(self.seconds, 6),
                "solver": self.solver, "version": self.version, "detail": self.detail}


@dataclass
class _Problem:
    text: str | None
    term: z3.BoolRef | None
    consts: list[str] = field(default_factory=list)   # model constants, by name


def _problem(problem, portable: bool) -> _Problem:
    if isinstance(problem, Obligation):
        consts = [d.name for d in problem.decls if not d.domain]
        if portable:
            if not problem.portable:
                raise ValueError(f"{problem!r} is z3-only: {problem.translation.reason}")
            return _Problem(problem.text, None, consts)
        return _Problem(None, problem.phi, consts)
    if isinstance(problem, str):
        return _Problem(problem, None, [])
    if isinstance(problem, z3.BoolRef):
        if portable:
            return _problem(Obligation(problem), True)
        return _Problem(None, problem, [])
    raise TypeError(f"cannot check a {type(problem).__name__}")


class Backend:
    name = "?"
    # The solver program behind the member: members that share one (bitwuzla and the sparse
    # search, which is bitwuzla on a corner of the inputs) are not independent of each other.
    engine = "?"

    @classmethod
    def available(cls) -> tuple[bool, str]:
        """(True, "") or (False, why not)."""
        raise NotImplementedError

    @property
    def version(self) -> str:
        raise NotImplementedError

    def supports(self, obligation: Obligation) -> str:
        """"" when this backend can decide `obligation`, else why not (the portfolio skips it)."""
        if self.name != "z3" and not obligation.portable:
            return f"z3-only obligation: {obligation.translation.reason}"
        return ""

    def check(self, problem, timeout_s: float) -> Result:
        t0 = time.perf_counter()
        try:
            return self._check(problem, timeout_s, t0)
        except Exception as e:      # a solver failure is an answer, never a crash
            return Result("error", None, time.perf_counter() - t0, self.name, self.version,
                          f"{type(e).__name__}: {e}")

    def _check(self, problem, timeout_s: float, t0: float) -> Result:
        raise NotImplementedError

    def _result(self, answer, model, t0, detail="") -> Result:
        return Result(answer, model, time.perf_counter() - t0, self.name, self.version, detail)


def _ms(timeout_s: float) -> int:
    return max(1, int(timeout_s * 1000))


# -- z3 ----------------------------------------------------------------------------------------
class Z3Backend(Backend):
    """In-process through the z3 API (a term directly; text through z3's SMT-LIB2 parser)."""

    name = "z3"
    engine = "z3"

    @classmethod
    def available(cls):
        return True, ""

    @property
    def version(self) -> str:
        return z3.get_version_string()

    def _check(self, problem, timeout_s, t0):
        p = _problem(problem, portable=False)
        s = z3.Solver()
        s.set("timeout", _ms(timeout_s))
        if p.term is not None:
            s.add(p.term)
            root = [p.term]
        else:
            assertions = z3.parse_smt2_string(p.text)
            s.add(assertions)
            root = list(assertions)
        r = s.check()
        if r == z3.sat:
            return self._result("sat", _z3_model(s.model(), root, p.consts), t0)
        if r == z3.unsat:
            return self._result("unsat", None, t0)
        why = s.reason_unknown()
        if why in ("timeout", "canceled") or time.perf_counter() - t0 >= timeout_s:
            return self._result("timeout", None, t0, why)
        return self._result("unknown", None, t0, why)


def _unquote(symbol: str) -> str:
    """SMT-LIB quoted symbols (`|A[0]|`) name the same constant as the bare z3 name."""
    return symbol[1:-1] if len(symbol) >= 2 and symbol[0] == symbol[-1] == "|" else symbol


def _z3_model(m: z3.ModelRef, roots, names) -> dict[str, int | bool]:
    from verifier.solvers.smtlib import postorder
    consts = {}
    for node in postorder(roots):
        if z3.is_const(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            consts[node.decl().name()] = node
    out: dict[str, int | bool] = {}
    for name in (names or sorted(consts)):
        c = consts.get(name)
        if c is None or name.startswith(AUX_PREFIX):
            continue
        v = m.eval(c, model_completion=True)
        if z3.is_bv_value(v):
            out[name] = v.as_long()
        elif z3.is_true(v) or z3.is_false(v):
            out[name] = z3.is_true(v)
    return out


# -- bitwuzla ----------------------------------------------------------------------------------
def _floating(text: str) -> bool:
    """Does portable SMT-LIB2 text use floating point? (`fp.` operations or `to_fp`.)"""
    return "(fp." in text or "to_fp" in text


class BitwuzlaBackend(Backend):
    """bitwuzla's Python API: its SMT-LIB2 parser, then check_sat with TIME_LIMIT_PER."""

    name = "bitwuzla"
    engine = "bitwuzla"
    # Options set on top of bitwuzla's defaults, by `bitwuzla.Option` member name, on every
    # obligation (bench/obligations.py times other configurations through this) ...
    OPTIONS: dict[str, object] = {}
    # ... and on those with floating point: no abstraction module. It abstracts multipliers
    # and dividers and refines them lazily, and the multipliers of a bit-blasted float
    # product are needed in full for its rounding: over keq's floating-point obligations it
    # cost 19 % in all, up to 5x on one (docs/solvers.md).
    FP_OPTIONS: dict[str, object] = {"ABSTRACTION": False}

    @classmethod
    def available(cls):
        try:
            import bitwuzla  # noqa: F401
        except Exception as e:
            return False, f"bitwuzla not installed ({e}); pip install 'keq[solvers]'"
        return True, ""

    @property
    def version(self) -> str:
        try:
            import bitwuzla
            return bitwuzla.version()
        except Exception:
            return "not installed"

    def options(self, timeout_s: float, floating: bool = False):
        """The `bitwuzla.Options` of one check: models, the time limit, `OPTIONS`, and
        `FP_OPTIONS` for an obligation with floating point."""
        import bitwuzla as bz
        opts = bz.Options()
        opts.set(bz.Option.PRODUCE_MODELS, True)
        opts.set(bz.Option.TIME_LIMIT_PER, _ms(timeout_s))
        chosen = dict(self.OPTIONS, **(self.FP_OPTIONS if floating else {}))
        for option, value in chosen.items():
            opts.set(getattr(bz.Option, option), value)
        return opts

    def _check(self, problem, timeout_s, t0):
        import bitwuzla as bz
        p = _problem(problem, portable=True)
        tm = bz.TermManager()
        floating = bool(problem.translation.fp_sorts) if isinstance(problem, Obligation) \
            else _floating(p.text)
        parser = bz.Parser(tm, self.options(timeout_s, floating))
        parser.parse(p.text, True, False)     # parse only: assertions, no check-sat
        solver = parser.bitwuzla()
        r = solver.check_sat()
        if r == bz.Result.SAT:
            model: dict[str, int | bool] = {}
            for f in parser.get_declared_funs():
                name = _unquote(f.symbol())
                if name.startswith(AUX_PREFIX) or (p.consts and name not in p.consts):
                    continue
                sort = f.sort()
                if sort.is_bv():
                    model[name] = int(solver.get_value(f).value(10))
                elif sort.is_bool():
                    model[name] = bool(solver.get_value(f).value())
            return self._result("sat", model, t0)
        if r == bz.Result.UNSAT:
            return self._result("unsat", None, t0)
        elapsed = time.perf_counter() - t0
        return self._result("timeout" if elapsed >= 0.9 * timeout_s else "unknown", None, t0)


# -- a search among sparse inputs -------------------------------------------------------------
_ELEMENT = re.compile(r"^(.+)\[(\d+)\]$")


class SparseBackend(BitwuzlaBackend):
    """A counterexample search in a small corner of the inputs: bitwuzla on the obligation
    with every element of each input buffer but its first few (`FREE`, of those the
    obligation mentions) fixed to zero. A model there is a model of the obligation (the
    corner only adds assertions) and is validated like any other; `unsat` there says nothing
    about the other inputs, so it answers `unknown`, as it does past `TIME_S`. Differences in
    floating point usually need a few nonzero elements, not many: a reordered sum of 32
    floats differs with three (bitwuzla: about 2 s in the corner, 15 s on the whole; z3: 2 s
    against 30). Only for floating-point obligations with more elements than that to fix.

    `TIME_S` is what it may hold back bitwuzla, which starts when it ends (two cores). It was
    3 s; on a loaded or slower machine the reordered sum above took 3.3 s in the corner
    (22 s for bitwuzla on the whole, 49 s for z3), so the search gave up just before its
    answer. 8 s leaves that margin and still costs a proof at most 8 s of one core."""

    name = "sparse"
    FREE = 3
    TIME_S = 8.0

    def supports(self, obligation: Obligation) -> str:
        why = super().supports(obligation)
        if not why and not obligation.translation.fp_sorts:
            why = "no floating point: no corner to search"
        if not why and not self.fixed(obligation):
            why = f"no input buffer has more than {self.FREE} elements in the obligation"
        return why

    @classmethod
    def fixed(cls, obligation: Obligation) -> list:
        """The element constants fixed to zero: each buffer's beyond its first `FREE`."""
        by_buffer: dict[str, list] = {}
        for d in obligation.decls:
            m = _ELEMENT.match(d.name)
            if d.domain or d.width is None or d.name.startswith(AUX_PREFIX) or m is None:
                continue
            by_buffer.setdefault(m.group(1), []).append((int(m.group(2)), d))
        return [d for elems in by_buffer.values() for _, d in sorted(elems)[cls.FREE:]]

    def _check(self, problem, timeout_s, t0):
        if not isinstance(problem, Obligation):
            return self._result("unknown", None, t0, "a sparse search needs an obligation")
        corner = "".join(f"(assert (= {smt_symbol(d.name)} (_ bv0 {d.width})))\n"
                         for d in self.fixed(problem))
        text = problem.text
        at = text.rindex("(check-sat)")
        r = super()._check(text[:at] + corner + text[at:], min(timeout_s, self.TIME_S), t0)
        if r.answer == "sat":
            return r
        return self._result("unknown", None, t0, f"{r.answer} with every input element past "
                                                 f"the first {self.FREE} of its buffer zero")


# -- cvc5 --------------------------------------------------------------------------------------
class Cvc5Backend(Backend):
    """cvc5's Python API: its SMT-LIB2 InputParser, then checkSat with tlimit-per."""

    name = "cvc5"
    engine = "cvc5"

    @classmethod
    def available(cls):
        try:
            import cvc5  # noqa: F401
        except Exception as e:
            return False, f"cvc5 not installed ({e}); pip install 'keq[solvers]'"
        return True, ""

    @property
    def version(self) -> str:
        try:
            import cvc5
            return getattr(cvc5, "__version__", "") or "?"
        except Exception:
            return "not installed"

    # cvc5's default FP solver (SymFPU) takes only these; others need --fp-exp, which cvc5
    # itself calls experimental with known issues: not used.
    FP_SORTS = {(8, 24), (11, 53)}

    def supports(self, obligation: Obligation) -> str:
        why = super().supports(obligation)
        bad = [s for s in obligation.translation.fp_sorts if s not in self.FP_SORTS]
        if not why and bad:
            why = f"cvc5 takes only Float32/Float64 without the experimental --fp-exp: {bad}"
        return why

    def _check(self, problem, timeout_s, t0):
        import cvc5
        p = _problem(problem, portable=True)
        tm = cvc5.TermManager()
        s = cvc5.Solver(tm)
        s.setOption("produce-models", "true")
        s.setOption("tlimit-per", str(_ms(timeout_s)))
        sm = cvc5.SymbolManager(tm)
        parser = cvc5.InputParser(s, sm)
        parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, p.text, "keq")
        while True:
            cmd = parser.nextCommand()
            if cmd.isNull():
                break
            if cmd.getCommandName() != "check-sat":
                cmd.invoke(s, sm)
        r = s.checkSat()
        if r.isSat():
            model: dict[str, int | bool] = {}
            for t in sm.getDeclaredTerms():
                name = t.getSymbol()
                if name.startswith(AUX_PREFIX) or (p.consts and name not in p.consts):
                    continue
                if t.getSort().isBitVector():
                    model[name] = int(s.getValue(t).getBitVectorValue(10))
                elif t.getSort().isBoolean():
                    model[name] = s.getValue(t).getBooleanValue()
            return self._result("sat", model, t0)
        if r.isUnsat():
            return self._result("unsat", None, t0)
        why = str(r.getUnknownExplanation())
        if "TIMEOUT" in why or time.perf_counter() - t0 >= 0.9 * timeout_s:
            return self._result("timeout", None, t0, why)
        return self._result("unknown", None, t0, why)


BACKENDS: dict[str, type[Backend]] = {
    "z3": Z3Backend, "bitwuzla": BitwuzlaBackend, "cvc5": Cvc5Backend, "sparse": SparseBackend}


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; known: {', '.join(BACKENDS)}") from None


def available_backends() -> dict[str, str]:
    """name -> "" for each usable backend, or the reason it is not usable."""
    return {n: b.available()[1] for n, b in BACKENDS.items()}
