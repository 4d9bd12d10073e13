"""The gate's report for people (text), programs (JSON) and CI systems (JUnit XML, SARIF
2.1.0). One JUnit test case / SARIF result per pair: CI shows which pair failed and why."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from semantics import __version__
from verifier.certs.check import CODES
from verifier.certs.gate import EXCLUDED, FAIL, NOT_GATED, PASS, GateReport


def text(rep: GateReport) -> str:
    lines = [f"keq gate {rep.manifest.name}: {rep.count(PASS)} passed, {rep.count(FAIL)} "
             f"failed, {rep.count(EXCLUDED)} excluded, {rep.count(NOT_GATED)} not gated"
             f"{' (with --recheck)' if rep.recheck else ''}  ({rep.seconds:.2f} s)"]
    if rep.ran_on != "this process":
        lines.append(f"  ran on {rep.ran_on}")
    for r in rep.retries:
        lines.append(f"  retried {r.line()}")
    label = {PASS: "PASS", FAIL: "FAIL", EXCLUDED: "EXCLUDED", NOT_GATED: "not gated"}
    for r in rep.results:
        name = f"{r.name}  " if r.name else ""
        extra = f"  ({r.note})" if r.note and r.status in (EXCLUDED, NOT_GATED) else ""
        lines.append(f"  {label[r.status]:<9} {name}{r.spec}{extra}")
        for f in r.findings:
            lines.append(f"      {f.code}: {f.message}")
        if r.note and r.status in (PASS, FAIL):
            lines.append(f"      {r.note}")
    if not rep.ok:
        lines.append("gate FAILED: re-prove the pairs above (keq prove --manifest "
                     f"{rep.manifest.name} SPEC...) or fix what changed")
    return "\n".join(lines)


def to_json(rep: GateReport) -> dict:
    return {"manifest": str(rep.manifest), "ok": rep.ok, "recheck": rep.recheck,
            "seconds": round(rep.seconds, 3), "ran_on": rep.ran_on,
            "retried": [r.to_json() for r in rep.retries],
            "counts": {s: rep.count(s) for s in (PASS, FAIL, EXCLUDED, NOT_GATED)},
            "pairs": [{"spec": r.spec, "name": r.name, "status": r.status, "note": r.note,
                       "certificate": r.certificate, "seconds": round(r.seconds, 3),
                       "findings": [{"code": f.code, "message": f.message}
                                    for f in r.findings]} for r in rep.results]}


def junit(rep: GateReport) -> str:
    suite = ET.Element("testsuite", name="keq gate", tests=str(len(rep.results)),
                       failures=str(rep.count(FAIL)), errors="0",
                       skipped=str(rep.count(EXCLUDED) + rep.count(NOT_GATED)),
                       time=f"{rep.seconds:.3f}")
    for r in rep.results:
        case = ET.SubElement(suite, "testcase", classname="keq.gate",
                             name=r.name or r.spec, file=r.spec, time=f"{r.seconds:.3f}")
        if r.status == FAIL:
            f = ET.SubElement(case, "failure", type=r.findings[0].code,
                              message="; ".join(f"{x.code}: {x.message}" for x in r.findings))
            f.text = "\n".join(f"{x.code}: {x.message}" for x in r.findings)
        elif r.status in (EXCLUDED, NOT_GATED):
            ET.SubElement(case, "skipped", message=f"{r.status}: {r.note}")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def sarif(rep: GateReport) -> dict:
    rules = [{"id": f"keq/{code}", "name": code.replace("-", " "),
              "shortDescription": {"text": desc}} for code, desc in CODES.items()]
    index = {code: i for i, code in enumerate(CODES)}
    results = []
    for r in rep.results:
        for f in r.findings:
            results.append({
                "ruleId": f"keq/{f.code}", "ruleIndex": index[f.code], "level": "error",
                "message": {"text": f"{r.name or r.spec}: {f.message}"},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": r.spec},
                    "region": {"startLine": 1}}}]})
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "keq", "version": __version__,
                                "rules": rules}},
            "results": results,
        }],
    }


def sarif_text(rep: GateReport) -> str:
    return json.dumps(sarif(rep), indent=1, sort_keys=True) + "\n"
