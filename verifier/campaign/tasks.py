"""The records of a campaign: what goes to a worker (`Task`), what comes back (`Done`), what
had to be run again (`Retry`), and the executor's interface (`Executor`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterator, Protocol, Sequence

from semantics.errors import KeqError

MAX_ATTEMPTS = 3        # a task whose worker dies this many times is lost, never a pass


@dataclass(frozen=True)
class Task:
    """One independent piece of a campaign: `fn(*args)` in some worker. `fn` is a
    module-level function (workers import it by name); `args` are plain, picklable data.
    `gpus`: the GPUs it needs (Ray schedules it only where one is free)."""
    key: str                              # how reports name it (a spec, a candidate)
    fn: Callable[..., Any]
    args: tuple = ()
    gpus: int = 0


@dataclass(frozen=True)
class Done:
    """A task's result, as it arrives (`index` into the campaign's task list)."""
    index: int
    key: str
    value: Any
    attempts: int = 1


class RetryCause(Enum):
    WORKER_DIED = "its worker process died"
    NODE_DIED = "its node died"
    RESULT_LOST = "its result was lost with its node"


@dataclass(frozen=True)
class Retry:
    """A task run again: which, why (the error the executor saw), on which attempt."""
    key: str
    cause: RetryCause
    attempt: int                          # the attempt that failed (1: the first)
    detail: str = ""

    def line(self) -> str:
        return f"{self.key}: attempt {self.attempt} lost ({self.cause.value}); run again"

    def to_json(self) -> dict:
        return {"task": self.key, "cause": self.cause.name.lower(), "attempt": self.attempt,
                "detail": self.detail}


class TaskLost(KeqError):
    """A task whose worker died on every attempt: the campaign cannot give its verdict."""


class Executor(Protocol):
    name: str                             # for reports: "2 local processes", "Ray at ..."
    retries: list[Retry]

    def run(self, tasks: Sequence[Task]) -> Iterator[Done]:
        """Each task's result as it finishes (any order), each task exactly once."""
        ...

    def close(self) -> None:
        ...


def in_order(executor: Executor, tasks: Sequence[Task]) -> Iterator[Any]:
    """The tasks' values in task order (each yielded as soon as it and all before it are
    done): what a sequential loop over them would see, first failure first."""
    held: dict[int, Any] = {}
    nxt = 0
    for done in executor.run(tasks):
        held[done.index] = done.value
        while nxt in held:
            yield held.pop(nxt)
            nxt += 1


@dataclass
class Attempts:
    """How often each task index has been tried (shared by the executors' retry logic)."""
    counts: dict[int, int] = field(default_factory=dict)

    def start(self, index: int) -> int:
        self.counts[index] = self.counts.get(index, 0) + 1
        return self.counts[index]

    def exhausted(self, index: int) -> bool:
        return self.counts.get(index, 0) >= MAX_ATTEMPTS
