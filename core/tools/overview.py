"""Row functions of the orientation tools: status, device_context, wake_up."""

from __future__ import annotations

import os
import platform
import sys
from collections import Counter
from typing import Annotated

from pydantic import Field

from ..capture.ledger import Ledger
from ..capture.worker import status_lines
from ..models.state import inference_state
from ..retrieval.search import MEMORY_COLUMNS
from .results import CountedName, DeviceContext, Fact, Memory, ProjectCount, WakeUp, WorkspaceStatus
from .scope import Scope


def _projects(scope: Scope) -> list[ProjectCount]:
    store = scope.store
    mem = Counter(r["project"] for r in store.memories(["project"]))
    src = Counter(r["project"] for r in store.source_rows(["project"]))
    return [ProjectCount(project=p, memories=mem[p], sources=src[p]) for p in sorted(set(mem) | set(src))]


def status(scope: Scope) -> WorkspaceStatus:
    """Counts, projects and index state of the workspace, and whether the embedding model is ready."""
    store = scope.store
    kinds = Counter(r["kind"] for r in store.memories(["kind"]))
    indexes = sorted(f"{idx.name} ({idx.index_type})" for idx in store.memory_indexes())
    services = scope.services
    return WorkspaceStatus(
        workspace=scope.workspace, folder=str(store.folder), memories=sum(kinds.values()),
        sources=store.count_sources(), facts=store.count_current_facts(),
        edges=store.count_edges(),
        by_kind=[CountedName(name=k, count=n) for k, n in sorted(kinds.items())],
        projects=_projects(scope), indexes=indexes, embed_model=scope.settings.embed.model,
        embed_ready=services.embedding.loaded, embed_note=scope.embed_note() or "",
        workspaces=services.workspace_names(), local_inference=inference_state(scope.settings, services.paths),
        run_budget=_run_budget(scope), shared_at=store.location.describe() if store.location else "",
        read_consistency_sec=(scope.settings.store.shared_read_consistency_sec if store.location
                              else scope.settings.store.read_consistency_sec),
        capture=status_lines(Ledger(services.paths.data_dir), scope.settings),
    )


def _run_budget(scope: Scope) -> str:
    cfg = scope.settings.recall.run_budget
    if not cfg.enabled:
        return ""
    return (f"{cfg.max_queries} queries in {cfg.max_rounds} rounds per run, within {cfg.deadline_sec:g} s of its "
            f"first reservation, {cfg.max_tokens_per_query} tokens per query (a call's `run`, default its MCP session)")


def _memory_total_mb() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20)
    except (ValueError, OSError, AttributeError):
        return None


def device_context(scope: Scope) -> DeviceContext:
    """This computer as the models see it: OS, CPU, memory, llama.cpp build and GPU offload."""
    from ..models.backend import backend_devices, llama_library, loaded_backends

    llama_cpp = llama_library()
    backends = loaded_backends()

    services = scope.services
    gpu, build, layers, note = services.inference.device_plan()
    return DeviceContext(
        os=f"{platform.system()} {platform.release()}", machine=platform.machine(),
        python=sys.version.split()[0], cpu_count=os.cpu_count() or 1, memory_total_mb=_memory_total_mb(),
        llama_cpp=llama_cpp.__version__, gpu_offload=bool(llama_cpp.llama_supports_gpu_offload()),
        system_info=llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip(),
        embed_model=scope.settings.embed.model, embed_threads=scope.settings.embed.threads or (os.cpu_count() or 1),
        data_dir=str(services.paths.data_dir),
        gpus=[f"[{g.index}] {g.name} ({f'{g.memory_mb:,} MB' if g.memory_mb else 'memory unknown'}, "
              f"{'discrete' if g.discrete else 'integrated'}, {g.source})" for g in services.inference.gpus()],
        gpu_choice=f"{gpu.name} ({layers} layers)" if gpu and layers else (gpu.name + " (not used)" if gpu else "CPU"),
        build=build.backend, build_reason=build.reason,
        backend_devices=[f"{d.name} ({d.kind}, {d.memory_total_mb:,} MB)" for d in backend_devices()],
        backends=list(backends.names) if backends.dynamic else [], backend_note=backends.note, note=note, local_inference=inference_state(scope.settings, services.paths),
    )


def wake_up(
    scope: Scope,
    project: Annotated[str | None, Field(max_length=100, description="Focus on this project.")] = None,
    limit: Annotated[int, Field(ge=1, le=20, description="Recent notes and facts to show (1–20).")] = 8,
) -> WakeUp:
    """Orientation at the start of a session: what is stored, the latest notes, the current facts."""
    store = scope.store
    notes = store.memories(MEMORY_COLUMNS, project=project, kinds=("note", "exchange"))
    notes.sort(key=lambda r: (r["updated_at"], r["id"]), reverse=True)
    facts = store.facts(project=project)
    facts.sort(key=lambda r: (r["valid_from"], r["id"]), reverse=True)
    return WakeUp(
        workspace=scope.workspace, project=project, memories=store.count_memories(project),
        sources=store.count_sources(project), projects=_projects(scope),
        recent=[Memory.from_row(r) for r in notes[:limit]],
        facts=[Fact(**{k: r[k] for k in Fact.model_fields}) for r in facts[:limit]],
    )
