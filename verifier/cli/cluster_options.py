"""The options every campaign command shares: where its tasks run (`--cluster`, `--jobs`)
and the live count of a long run (`--progress`)."""

from __future__ import annotations

import argparse
import sys

from semantics.errors import KeqError

CLUSTER_HELP = ("run the tasks on a Ray cluster: ray://HOST:PORT (Ray Client), HOST:PORT (a "
                "cluster's GCS address), or auto (the cluster this machine belongs to); "
                "needs Ray (pip install 'keq[cluster]'). Default: local processes")


def add_cluster_options(p: argparse.ArgumentParser, *, jobs_default: int | None = 1,
                        jobs_help: str = "local worker processes (default 1: this process)"
                        ) -> None:
    p.add_argument("--cluster", metavar="ADDRESS", default=None, help=CLUSTER_HELP)
    if jobs_default is not None:
        p.add_argument("-j", "--jobs", type=int, default=jobs_default, metavar="N",
                       help=jobs_help)
    p.add_argument("--progress", action="store_true",
                   help="show a live count (done / proved / refuted / inconclusive) on stderr "
                        "(default: when stderr is a terminal and --json is not given)")


def wants_progress(args: argparse.Namespace) -> bool:
    return bool(args.progress) or (not getattr(args, "json", False) and sys.stderr.isatty())


def executor_of(args: argparse.Namespace):
    """The executor the options ask for (`verifier.campaign.executor_for`)."""
    from verifier.campaign import executor_for
    if args.cluster is not None:
        if not args.cluster.strip():
            raise KeqError("--cluster: give an address (ray://HOST:PORT, HOST:PORT or auto)")
        return executor_for(args.cluster)
    jobs = getattr(args, "jobs", 1)
    if jobs < 1:
        raise KeqError(f"--jobs {jobs}: give 1 or more processes")
    return executor_for(None, jobs)
