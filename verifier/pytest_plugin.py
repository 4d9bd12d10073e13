"""pytest plugin: `pytest --keq-gate` adds one test per gated pair of the keq manifest, failing
with the gate's reasons (registered through the `pytest11` entry point; without --keq-gate it
does nothing, so installing keq changes no other test run).

    pytest --keq-gate [--keq-manifest FILE] [--keq-recheck] [--keq-trusted-keys DIR]
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser) -> None:
    g = parser.getgroup("keq", "keq proof gate")
    g.addoption("--keq-gate", action="store_true", default=False,
                help="add one test per pair gated by the keq manifest (keq gate)")
    g.addoption("--keq-manifest", metavar="FILE", default=None,
                help="keq.toml or pyproject.toml with [tool.keq] (default: in the rootdir)")
    g.addoption("--keq-recheck", action="store_true", default=False,
                help="also re-derive and re-solve every obligation (slow)")
    g.addoption("--keq-trusted-keys", metavar="DIR", default=None,
                help="require certificates signed by a key in DIR/*.pub")


class KeqGateFailure(Exception):
    pass


class KeqManifestNode(pytest.File):
    def collect(self):
        _, report = self.config._keq_gate_report
        for r in report.results:
            yield KeqPairItem.from_parent(self, name=r.name or r.spec, result=r)


class KeqPairItem(pytest.Item):
    def __init__(self, *, result, **kw) -> None:
        super().__init__(**kw)
        self.result = result

    def runtest(self) -> None:
        from verifier.certs.gate import EXCLUDED, FAIL, NOT_GATED
        r = self.result
        if r.status in (EXCLUDED, NOT_GATED):
            pytest.skip(f"keq gate: {r.status}: {r.note}")
        if r.status == FAIL:
            raise KeqGateFailure("\n".join(f"{f.code}: {f.message}" for f in r.findings))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, KeqGateFailure):
            return f"keq gate: {self.result.spec}\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"keq gate: {self.name}"


def _manifest_path(config) -> Path:
    from verifier.certs import manifest as mf
    path = config.getoption("keq_manifest")
    return Path(path).resolve() if path else mf.find_manifest(Path(config.rootpath)).resolve()


def _report(config):
    """The gate runs once per session, at collection; the items only report its results."""
    if not hasattr(config, "_keq_gate_report"):
        from verifier.certs import manifest as mf
        from verifier.certs.gate import run_gate
        m = mf.load(_manifest_path(config))
        trusted = None
        if config.getoption("keq_trusted_keys"):
            from verifier.certs.signing import trusted_keys
            trusted = trusted_keys(config.getoption("keq_trusted_keys"))
        config._keq_gate_report = (m, run_gate(m, do_recheck=config.getoption("keq_recheck"),
                                               trusted=trusted))
    return config._keq_gate_report


def pytest_collect_file(file_path, parent):
    """`pytest --keq-gate pyproject.toml`: the manifest itself collects as the gate's tests."""
    config = parent.config
    if config.getoption("keq_gate") and file_path.resolve() == _manifest_path(config):
        _report(config)
        return KeqManifestNode.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(session, config, items) -> None:
    """`pytest --keq-gate` with the usual test paths: the gate's tests are added to them."""
    if not config.getoption("keq_gate") or any(isinstance(i, KeqPairItem) for i in items):
        return
    m, _ = _report(config)
    items.extend(KeqManifestNode.from_parent(session, path=m.path).collect())
