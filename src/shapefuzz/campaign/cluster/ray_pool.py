"""`RayPool`: the campaign's worker pool on a Ray cluster, with `WorkerPool`'s interface (idle,
busy, submit, wait, abandon, close), so the engine runs unchanged. Each task is a Ray task whose
label selector names the nodes where its lanes execute (`Cluster.placement`); Ray places it,
runs it again elsewhere when its node dies, and replaces a worker process that died.

Results are values: an outcome, or a shrunk reproducer that the head saves into the corpus
(`head_finish`). A task's result arrives once, so a candidate is counted once, whatever ran
twice; a task whose node died is submitted again, never reported lost."""

from __future__ import annotations

import collections
import math
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from shapefuzz.campaign.cluster.connect import NODE_LABEL, Cluster, import_ray, remote
from shapefuzz.campaign.cluster.node import ToolchainSpec, run_task
from shapefuzz.campaign.worker_pool import Done, Task
from shapefuzz.campaign.outcomes import EnvironmentCondition, TaskKind
from shapefuzz.errors import EnvironmentFault

MAX_RETRIES = 2  # Ray's own retries of a task whose worker or node died
MAX_RESUBMITS = 3  # ours, when Ray's retries could not find a live node for it
REFRESH_SECONDS = 2.0  # how often the live nodes are listed
UNWIND_SECONDS = 5.0  # a cancelled task's time to unwind on its node before its worker is killed


@dataclass
class _Flight:
    task: Task
    nodes: list[str]
    started: float = field(default_factory=time.monotonic)
    resubmits: int = 0


@dataclass
class NodeTally:
    tasks: int = 0
    checks: int = 0
    seconds: float = 0.0


class RayPool:
    def __init__(self, cluster: Cluster, target: Any, jobs: int, spec: ToolchainSpec,
                 head_finish: Callable[[Any], Any] | None = None) -> None:
        self.ray = import_ray()
        self.cluster, self.jobs, self.spec = cluster, jobs, spec
        self.head_finish = head_finish  # turns a shrink's value into (text, corpus entry) on the head
        self.target_ref = self.ray.put(target)
        self.flights: dict[Any, _Flight] = {}  # ObjectRef -> what it runs
        self.ready: list[Done] = []
        self.replaced = 0  # tasks submitted again after their node died
        self.tally: dict[str, NodeTally] = collections.defaultdict(NodeTally)
        self.start = time.monotonic()
        self._refreshed = time.monotonic()

    # --- the WorkerPool interface ---------------------------------------------------------------
    @property
    def idle(self) -> int:
        return max(0, self.jobs - len(self.flights) - len(self.ready))

    @property
    def busy(self) -> list[Task]:
        return [f.task for f in self.flights.values()]

    def submit(self, task: Task, resubmits: int = 0) -> None:
        nodes = self.cluster.placement(task.lanes)
        if not nodes:
            self.ready.append(Done(task, None, 0.0, "no node of the cluster takes part any more", lost=True))
            return
        ref = remote(run_task).options(
            num_cpus=self.cpus_per_task(), max_retries=MAX_RETRIES, name=f"shapefuzz-{task.kind.value}",
            label_selector={NODE_LABEL: f"in({','.join(nodes)})"},
        ).remote(self.target_ref, self.spec, task.kind.value, task.candidate, task.argument)
        self.flights[ref] = _Flight(task, nodes, resubmits=resubmits)

    def cpus_per_task(self) -> float:
        """Every task asks for 1/k of a CPU, k the least whole number that lets --jobs tasks run at
        once on the cluster's CPUs (Ray counts resources in steps of 1/10000)."""
        k = math.ceil(self.jobs / max(1, self.cluster.cpus))
        return math.floor(10_000 / k) / 10_000

    def wait(self, timeout: float) -> list[Done]:
        """Finished (or lost) tasks, waiting at most `timeout` seconds for the first."""
        done, self.ready = self.ready, []
        if time.monotonic() - self._refreshed >= REFRESH_SECONDS:
            self._refresh()
        if not self.flights:
            if not done:
                time.sleep(min(timeout, 0.05))
            return done
        now = time.monotonic()
        soonest = min(f.started + f.task.deadline for f in self.flights.values()) - now
        wait_for = 0.0 if done else max(0.0, min(timeout, soonest))
        refs = list(self.flights)
        ready, rest = self.ray.wait(refs, num_returns=1, timeout=wait_for)
        if ready and rest:
            ready += self.ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        for ref in ready:
            done += self._collect(ref, self.flights.pop(ref))
        now = time.monotonic()
        for ref, flight in list(self.flights.items()):
            if now - flight.started > flight.task.deadline:
                self.ray.cancel(ref, force=True)  # kills the worker; the compiler dies with it
                del self.flights[ref]
                done.append(Done(flight.task, None, now - flight.started,
                                 f"ran past its {flight.task.deadline:.0f}s deadline; cancelled, Ray replaces "
                                 "the worker", lost=True))
        return done

    def abandon(self) -> list[Task]:
        """Cancel every task in flight (Ctrl-C, or time is up); return them. Each is first asked to
        stop (a KeyboardInterrupt in its worker: the sandbox kills its compiler's group and its
        temporary folders are removed, on the node); one still running after UNWIND_SECONDS is
        killed with its worker (Ray also kills the worker's children, a guardian among them, so
        nothing of ours on the node would remove its folders before a later sweep)."""
        lost = [f.task for f in self.flights.values()]
        refs = list(self.flights) if not self.cluster.lost else []  # a lost head's tasks died with it
        for ref in refs:
            self.ray.cancel(ref, force=False)
        if refs:
            _, running = self.ray.wait(refs, num_returns=len(refs), timeout=UNWIND_SECONDS)
            for ref in running:
                self.ray.cancel(ref, force=True)
        self.flights.clear()
        return lost

    def close(self) -> None:
        self.abandon()
        self.cluster.cancel_probes()

    # --- results ----------------------------------------------------------------------------------
    def _collect(self, ref: Any, flight: _Flight) -> list[Done]:
        ray, task = self.ray, flight.task
        errors = ray.exceptions
        elapsed = time.monotonic() - flight.started
        try:
            result = ray.get(ref)
        except (errors.NodeDiedError, errors.TaskUnschedulableError, errors.ObjectLostError,
                errors.LocalRayletDiedError, errors.WorkerCrashedError) as error:
            died = self.cluster.refresh()
            node_gone = bool(died) or not isinstance(error, errors.WorkerCrashedError) or not set(
                flight.nodes) <= {n.node_id for n in self.cluster.working()}
            if node_gone and flight.resubmits < MAX_RESUBMITS:
                self.replaced += 1
                self.submit(task, flight.resubmits + 1)
                return []
            why = "its worker died on this candidate" if not node_gone else "its nodes kept dying"
            return [Done(task, None, elapsed, f"{why} ({type(error).__name__}); Ray replaced the worker", lost=True)]
        except errors.RayTaskError as error:  # our code failed before the task ran (unpickling, imports)
            return [Done(task, None, elapsed, _one_line(str(error)))]
        except errors.RayError as error:
            return [Done(task, None, elapsed, f"{type(error).__name__}: {_one_line(str(error))}", lost=True)]
        tally = self.tally[result.node_id]
        tally.tasks += 1
        tally.checks += task.kind == TaskKind.CHECK
        tally.seconds += result.seconds
        value, error_text, environment = result.value, result.error, result.environment
        if task.kind == TaskKind.SHRINK and self.head_finish is not None and value is not None:
            try:
                value = self.head_finish(value)  # the head writes the corpus, never a node
            except EnvironmentFault as fault:  # the head's machine: the shrink is retried
                value, error_text, environment = None, traceback.format_exc(limit=8), EnvironmentCondition.of(fault)
            except Exception:  # noqa: BLE001 - a corpus problem stops this shrink, not the campaign
                value, error_text = None, traceback.format_exc(limit=8)
        return [Done(task, value, result.seconds, error_text, environment=environment)]

    def _refresh(self) -> None:
        self._refreshed = time.monotonic()
        self.cluster.refresh()

    # --- what the user sees -----------------------------------------------------------------------
    def node_rates(self) -> list[dict[str, Any]]:
        """Per node: tasks done, candidates checked, and checks per minute since the pool started."""
        minutes = max(1e-9, (time.monotonic() - self.start) / 60)
        rows = []
        for node in self.cluster.nodes.values():
            t = self.tally.get(node.node_id, NodeTally())
            rows.append({"node": node.name, "alive": node.alive, "refused": node.refused, "tasks": t.tasks,
                         "checks": t.checks, "per_minute": round(t.checks / minutes, 1),
                         "busy_seconds": round(t.seconds, 1)})
        return rows

    def status(self) -> str:
        rates = [r for r in self.node_rates() if r["alive"] and not r["refused"]]
        line = f"nodes {len(rates)}  in flight {len(self.flights)}"
        if rates and len(rates) <= 4:
            return line + "  (" + ", ".join(f"{r['node']} {r['per_minute']:.0f}/min" for r in rates) + ")"
        if rates:
            low, high = min(r["per_minute"] for r in rates), max(r["per_minute"] for r in rates)
            return line + f"  (per node {low:.0f}-{high:.0f}/min)"
        return line


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else "")[:300]


__all__ = ["RayPool", "NodeTally"]
